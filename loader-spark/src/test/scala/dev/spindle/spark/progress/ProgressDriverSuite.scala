package dev.spindle.spark.progress

import java.lang.management.ManagementFactory
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.spark.example.GenSample
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * `spindle preprocess` as a separate driver JVM (this JVM's flags and classpath, the launcher's
 * properties and log configuration) under a real pseudo-terminal (`script`) and with stderr in a
 * file: a live line that reaches 100% and is erased before the summary, or plain lines.
 */
class ProgressDriverSuite extends AnyFunSuite {
  private val root = Paths.get("..").toAbsolutePath.normalize

  private def gen(dir: Path): Path = {
    GenSample.run(new GenSample.Options(dir.toString, 4, 150, 320, 240, 3L), new Configuration())
    dir
  }

  /** The driver's command line; `terminal`: what the launcher would say about stderr. */
  private def command(in: Path, out: Path, terminal: Boolean, extra: Seq[String]): Seq[String] =
    driver(terminal, Seq("preprocess", "--input", in.toString, "--output", out.toString,
      "--master", "local[2]", "--conf", "spark.spindle.partitionBytes=1") ++ extra)

  /** A driver JVM running `SpindleMain args`. */
  private def driver(terminal: Boolean, args: Seq[String]): Seq[String] = {
    val java = ProcessHandle.current().info().command().get()
    val flags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filterNot(a => a.startsWith("-agentlib") || a.startsWith("-javaagent"))
    Seq(java) ++ flags ++ Seq(s"-Dspindle.stderr.terminal=$terminal", "-Dspindle.ui=true",
      s"-Dlog4j2.configurationFile=${root.resolve("conf/log4j2.properties")}",
      "dev.spindle.spark.cli.SpindleMain") ++ args
  }

  private def start(cmd: Seq[String], log: Path): Process = {
    val pb = new ProcessBuilder(cmd: _*).redirectErrorStream(true).redirectOutput(log.toFile)
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1") // as bin/spindle: the UI on loopback
    // the classpath through the environment: `script` takes one command string
    pb.environment().put("CLASSPATH",
      System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")))
    val p = pb.start()
    assert(p.waitFor(240, TimeUnit.SECONDS), s"the driver did not end:\n${Files.readString(log)}")
    assert(p.exitValue() == 0, Files.readString(log))
    p
  }

  private def quoted(args: Seq[String]): String =
    args.map(a => "'" + a.replace("'", "'\\''") + "'").mkString(" ")

  test("under a pseudo-terminal: one live line redrawn in place reaches 100% and is erased before the summary") {
    TestFiles.withTempDir("progress-pty") { dir =>
      val cmd = command(gen(dir.resolve("in")), dir.resolve("out"), terminal = true, Seq())
      val log = dir.resolve("pty.log")
      start(Seq("script", "-qfec", quoted(cmd), "/dev/null"), log)
      val text = Files.readString(log)
      assert("spindle: Spark UI at http://127\\.0\\.0\\.1:\\d+\r?\n".r.findAllIn(text).size == 1, text)
      val draws = "\rpreprocess: [0-9,]+/600 samples [0-9.]+%[^\r\n]*\u001b\\[K".r
        .findAllIn(text).toSeq
      assert(draws.nonEmpty, text)
      assert(draws.last.contains("600/600 samples 100.0%"), draws.mkString("\n"))
      assert(!text.contains("preprocess: 600/600 samples 100.0%\n"), "a live line left behind")
      val summary = "\r\u001b[Kpreprocess: 600 images (0 quarantined) in "
      assert(text.contains(summary), text.takeRight(2000))
      val line = text.substring(text.indexOf(summary) + 4).linesIterator.next()
      assert(line.matches("preprocess: 600 images \\(0 quarantined\\) in [0-9.]+ s, .* -> file:.*out\r?"),
        line)
    }
  }

  test("without a terminal: a plain line every --progress-interval seconds, no carriage returns") {
    TestFiles.withTempDir("progress-plain") { dir =>
      val cmd = command(gen(dir.resolve("in")), dir.resolve("out"), terminal = false,
        Seq("--progress-interval", "1", "--no-ui"))
      val log = dir.resolve("plain.log")
      start(cmd, log)
      val text = Files.readString(log)
      assert(!text.contains("\r") && !text.contains("\u001b"), text)
      assert(!text.contains("Spark UI"), text)
      val lines = text.linesIterator.filter(_.matches("preprocess: [0-9,]+/600 samples .*")).toSeq
      assert(lines.nonEmpty, text)
      assert(lines.forall(_.contains(" quarantined")), lines.mkString("\n"))
      assert(text.linesIterator.exists(_.startsWith("preprocess: 600 images (0 quarantined) in ")),
        text)
    }
  }

  test("feed under a pseudo-terminal: a live line per epoch, the last reaches 100%, then the summary") {
    TestFiles.withTempDir("progress-feed") { dir =>
      val cmd = driver(terminal = true, Seq("feed", "--input", gen(dir.resolve("in")).toString,
        "--world-size", "2", "--epochs", "2", "--size", "16", "--batch-size", "8",
        "--master", "local[2]", "--no-ui"))
      val log = dir.resolve("feed.log")
      start(Seq("script", "-qfec", quoted(cmd), "/dev/null"), log)
      val text = Files.readString(log)
      val draw = "\rfeed epoch ([01]) of 0\\.\\.1: ([0-9,]+)/([0-9,]+) samples [0-9.]+%[^\r\n]*\u001b\\[K".r
      val draws = draw.findAllMatchIn(text).toSeq
      assert(draws.map(_.group(1)).distinct == Seq("0", "1"), text.takeRight(3000))
      val last = draws.last
      assert(last.group(1) == "1" && last.group(2) == last.group(3), last.matched)
      // an epoch's total is its rows: 600 samples, 2 ranks, batches of 8, the remainder dropped
      assert(draws.forall(_.group(3) == "592"), draws.map(_.matched).mkString("\n"))
      assert(text.contains("\r\u001b[Kfeed: "), text.takeRight(2000))
    }
  }

  test("--progress never: no progress lines at all") {
    TestFiles.withTempDir("progress-never") { dir =>
      val cmd = command(gen(dir.resolve("in")), dir.resolve("out"), terminal = true,
        Seq("--progress", "never"))
      val log = dir.resolve("never.log")
      start(cmd, log)
      val text = Files.readString(log)
      assert(!text.contains("samples") && !text.contains("\r"), text)
      assert(text.contains("preprocess: 600 images (0 quarantined) in "), text)
    }
  }
}
