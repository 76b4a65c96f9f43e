package dev.spindle.spark.job

import java.lang.management.ManagementFactory
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.spark.sink.{OutputCommitter, OutputLock}
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * A real driver JVM killed (SIGKILL) in the middle of an `--overwrite` commit: the output stays
 * the old complete one, and the next job names the dead driver's lock and removes its files.
 */
class PreprocessKillSuite extends AnyFunSuite with SparkFixture {
  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.batchSize" -> "4",
    "spark.spindle.partitionBytes" -> "1")

  private def gen(dir: Path, seed: Long): Path = {
    GenSample.run(new GenSample.Options(dir.toString, 3, 4, 48, 32, seed), new Configuration())
    dir
  }

  /** `bin/spindle preprocess` as a separate driver JVM with this JVM's flags and classpath. */
  private def driver(in: Path, out: Path, log: Path): Process = {
    val java = ProcessHandle.current().info().command().get()
    val flags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filterNot(a => a.startsWith("-agentlib") || a.startsWith("-javaagent"))
    val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
    val args = Seq(java) ++ flags ++ Seq(s"-D${OutputCommitter.STEP_DELAY_PROPERTY}=3000",
      "-cp", cp, "dev.spindle.spark.cli.SpindleMain",
      "preprocess", "--input", in.toString, "--output", out.toString, "--overwrite",
      "--master", "local[2]") ++
      conf.toSeq.flatMap { case (k, v) => Seq("--conf", s"$k=$v") }
    new ProcessBuilder(args: _*).redirectErrorStream(true).redirectOutput(log.toFile).start()
  }

  private def await(what: String, log: Path, timeoutS: Int)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for $what; driver log:\n" +
        Files.readString(log).linesIterator.toSeq.takeRight(40).mkString("\n"))
      Thread.sleep(50)
    }
  }

  private def names(out: Path): Set[String] =
    Files.list(out).iterator().asScala.map(_.getFileName.toString).filterNot(_.startsWith(".")).toSet

  test("a driver killed mid-commit leaves the old output whole; the next job cleans up after it") {
    TestFiles.withTempDir("kill") { dir =>
      val out = dir.resolve("out")
      val first = PreprocessJob.run(spark, gen(dir.resolve("a"), 1L).toString, out.toString, false,
        conf.asJava)
      val oldManifest = Files.readString(out.resolve("_manifest.json"))
      val oldFiles = ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet
      val oldRows = ArrowFiles.readAll(out)

      val log = dir.resolve("driver.log")
      val child = driver(gen(dir.resolve("b"), 2L), out, log)
      try {
        await("the first committed part", log, 180) {
          names(out).exists(n => n.matches("part-\\d{5}-[0-9a-f]{8}\\.arrow") && !oldFiles(n))
        }
      } finally {
        child.destroyForcibly()
        child.waitFor(30, TimeUnit.SECONDS)
      }
      assert(Files.readString(out.resolve("_manifest.json")) == oldManifest)
      assert(ArrowFiles.readAll(out) == oldRows, "the old output changed under a dying commit")
      assert(Files.readString(out.resolve(OutputLock.FILE)).contains("\"pid\":" + child.pid()))

      val next = PreprocessJob.run(spark, dir.resolve("b").toString, out.toString, true, conf.asJava)
      val recovered = next.get("recovered").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      assert(recovered("stale_lock").toString.contains("pid " + child.pid()))
      assert(recovered("stale_lock_reason").toString.contains("is not running"))
      val removed = recovered("removed").asInstanceOf[java.util.List[String]].asScala
      assert(removed.exists(_.startsWith("_temporary/")), removed)
      assert(removed.exists(_.startsWith("part-")), removed)
      val listed = ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet
      assert(names(out) == listed + "_manifest.json")
      assert(ArrowFiles.readAll(out).size == 12 && first.get("images") == 12L)
      assert(ArrowFiles.readAll(out).map(_.label) != oldRows.map(_.label), "still the old data")
    }
  }
}
