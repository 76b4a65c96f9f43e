package dev.spindle

import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import dev.spindle.spark.example.GenSample
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * After `package` (failsafe, `mvn verify`): `bin/spindle preprocess` as a user runs it, on 2,000
 * generated images, under a real pseudo-terminal (`script`): the launcher sees the terminal, its
 * stderr filter passes the carriage-return redraws through, the live line names the bottleneck
 * stage, reaches 100% and is erased before the summary; the UI's address is printed once.
 */
class ProgressIT extends AnyFunSuite {
  private val root = Paths.get("..").toAbsolutePath.normalize

  private def run(cmd: String, dir: Path, log: Path): Int = {
    val pb = new ProcessBuilder("script", "-qfec", cmd, "/dev/null").directory(root.toFile)
      .redirectErrorStream(true).redirectOutput(log.toFile)
    Seq("SPARK_TESTING", "SPARK_SCALA_VERSION", "SPARK_HOME", "SPARK_LOCAL_IP")
      .foreach(pb.environment().remove)
    val p = pb.start()
    if (!p.waitFor(300, TimeUnit.SECONDS)) {
      p.destroyForcibly()
      fail(s"$cmd did not end within 300 s:\n${Files.readString(log)}")
    }
    p.exitValue()
  }

  test("bin/spindle preprocess on 2,000 images in a terminal: a live line that reaches 100%, then the summary") {
    TestFiles.withTempDir("progress-it") { dir =>
      val in = dir.resolve("in")
      GenSample.run(new GenSample.Options(in.toString, 4, 500, 160, 120, 7L), new Configuration())
      val log = dir.resolve("pty.log")
      val code = run(s"bin/spindle preprocess --input '$in' --output '${dir.resolve("out")}'"
        + " --master 'local[2]'", dir, log)
      val text = Files.readString(log)
      assert(code == 0, text)
      assert(!text.contains("incubator"), text)
      assert("spindle: Spark UI at http://127\\.0\\.0\\.1:\\d+".r.findAllIn(text).size == 1, text)
      val draws = "\rpreprocess: [0-9,]+/2,000 samples [0-9.]+%[^\r\n]*\u001b\\[K".r
        .findAllIn(text).toSeq
      assert(draws.size >= 2, text)
      assert(draws.last.contains("2,000/2,000 samples 100.0%"), draws.mkString("\n"))
      // the busiest stage of the cluster's pipelines is named once it has run for a while
      val named = " bottleneck (read|decode|batch|sink)( |\u001b)".r
      assert(draws.exists(named.findFirstIn(_).isDefined), draws.mkString("\n"))
      assert(text.contains("\r\u001b[Kpreprocess: 2000 images (0 quarantined) in "), text)
    }
  }
}
