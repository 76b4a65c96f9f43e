package dev.spindle.spark.cli

import java.lang.management.ManagementFactory
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.spark.example.GenSample
import dev.spindle.spark.metrics.JobReport
import dev.spindle.spark.sink.{OutputCommitter, OutputLock}
import dev.spindle.spark.testkit.{ArrowFiles, FaultyFileSystem, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * Ctrl-C during a job: `spindle preprocess` as a separate driver JVM (this JVM's flags and
 * classpath, the launcher's log configuration) gets SIGINT while its tasks write their attempt
 * files; it cancels the job, removes them and its lock, says `interrupted by the user` once
 * without a stack trace, writes its report saying so and exits 130.
 */
class InterruptSuite extends AnyFunSuite {
  private val root = Paths.get("..").toAbsolutePath.normalize

  /** The job's settings: four tasks, each creating its attempt file on a slow disk (3 s). */
  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.partitionBytes" -> "1",
    "spark.hadoop.fs.faulty.impl" -> classOf[FaultyFileSystem].getName,
    "spark.hadoop.fs.faulty.createDelayMs" -> "3000")

  private def gen(dir: Path, seed: Long): Path = {
    GenSample.run(new GenSample.Options(dir.toString, 4, 4, 48, 32, seed), new Configuration())
    dir
  }

  /**
   * Runs the driver with SIGINT's default disposition: a process started with SIGINT ignored (under
   * nohup, or as a background job of a shell without job control) passes that on to its children,
   * and a JVM that starts with SIGINT ignored never handles it. GNU env (coreutils 8.31 and later)
   * resets it and then executes the driver in its own place (same pid); without such an env the
   * driver inherits this JVM's disposition as before.
   */
  private lazy val defaultSigint: Seq[String] = {
    val env = Seq("env", "--default-signal=INT")
    val works = scala.util.Try(new ProcessBuilder((env :+ "true"): _*).start().waitFor() == 0)
    if (works.getOrElse(false)) env else Seq.empty
  }

  /** `SpindleMain preprocess` in a driver JVM of its own, writing stdout and stderr to `log`. */
  private def driver(in: Path, out: Path, report: Path, log: Path): Process = {
    val java = ProcessHandle.current().info().command().get()
    val flags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filterNot(a => a.startsWith("-agentlib") || a.startsWith("-javaagent"))
    val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
    val args = defaultSigint ++ Seq(java) ++ flags ++ Seq(
      s"-Dlog4j2.configurationFile=${root.resolve("conf/log4j2.properties")}", "-cp", cp,
      "dev.spindle.spark.cli.SpindleMain", "preprocess", "--input", in.toString,
      "--output", FaultyFileSystem.uri(out), "--overwrite", "--report", report.toString,
      "--master", "local[2]", "--no-ui", "--progress", "never") ++
      conf.toSeq.flatMap { case (k, v) => Seq("--conf", s"$k=$v") }
    val pb = new ProcessBuilder(args: _*).redirectErrorStream(true).redirectOutput(log.toFile)
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1")
    pb.start()
  }

  /** The attempt files under `out`'s `_temporary` folder. */
  private def attempts(out: Path): Seq[Path] = {
    val temporary = out.resolve("_temporary")
    if (!Files.isDirectory(temporary)) Seq.empty
    else Files.walk(temporary).iterator().asScala.filter(_.getFileName.toString.contains(".attempt-"))
      .toSeq
  }

  /** Sends SIGINT to `child` once its tasks are writing; returns its exit code and output. */
  private def interruptMidJob(child: Process, out: Path, log: Path): (Int, String) = {
    try {
      val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180)
      while (attempts(out).isEmpty) {
        assert(child.isAlive, "the job ended before it was interrupted:\n" + Files.readString(log))
        assert(System.nanoTime() < deadline, "no attempt file appeared:\n" + Files.readString(log))
        Thread.sleep(50)
      }
      assert(new ProcessBuilder("kill", "-INT", child.pid().toString).start().waitFor() == 0)
      assert(child.waitFor(120, TimeUnit.SECONDS), "no exit after SIGINT:\n" + Files.readString(log))
      (child.exitValue(), Files.readString(log))
    } finally child.destroyForcibly()
  }

  private def checkInterrupted(code: Int, log: String, report: Path): Unit = {
    assert(code == 130, log)
    assert("interrupted by the user".r.findAllIn(log).size == 1, log)
    assert(log.contains("spindle preprocess: interrupted by the user\n"), log)
    assert(!log.contains("\tat "), "a stack trace:\n" + log)
    assert(!log.contains(" failed: "), log)
    val r = JobReport.read(report).asScala
    assert(r("status") == "interrupted" && r("exit_code") == 130, r)
    assert(r("error") == "interrupted by the user", r)
  }

  test("SIGINT mid-job: cancelled, attempt files and lock removed, the old output kept, exit 130") {
    TestFiles.withTempDir("sigint") { dir =>
      val out = dir.resolve("out")
      val (first, _, firstErr) = Cli.run("preprocess", "--input", gen(dir.resolve("a"), 1L).toString,
        "--output", out.toString, "--size", "16", "--master", "local[2]", "--no-ui")
      assert(first == 0, firstErr)
      val manifest = Files.readString(out.resolve(OutputCommitter.MANIFEST))
      val rows = ArrowFiles.readAll(out)

      val log = dir.resolve("driver.log")
      val report = dir.resolve("report.json")
      val (code, text) = interruptMidJob(driver(gen(dir.resolve("b"), 2L), out, report, log), out, log)
      checkInterrupted(code, text, report)
      assert(!Files.exists(out.resolve("_temporary")), "attempt files left:\n" + text)
      assert(!Files.exists(out.resolve(OutputLock.FILE)), "lock left:\n" + text)
      assert(Files.readString(out.resolve(OutputCommitter.MANIFEST)) == manifest)
      assert(ArrowFiles.readAll(out) == rows, "the old output changed")
    }
  }

  test("SIGINT mid-job on a new output: the folder the job created is removed") {
    TestFiles.withTempDir("sigint-new") { dir =>
      val out = dir.resolve("new/out")
      val log = dir.resolve("driver.log")
      val report = dir.resolve("report.json")
      val (code, text) = interruptMidJob(driver(gen(dir.resolve("in"), 3L), out, report, log), out, log)
      checkInterrupted(code, text, report)
      assert(!Files.exists(dir.resolve("new")), "the job left the folders it created:\n" + text)
    }
  }
}
