package dev.spindle.spark.feed

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.file.Path

import dev.spindle.FeedReport
import dev.spindle.spark.cli.{FeedCommand, SpindleMain}
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/** Stopping, saving and resuming through the feed command; bad input. */
class FeedResumeSuite extends AnyFunSuite with SparkFixture with FeedProperties {
  import FeedData._

  private def feed(in: Path, args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in.toString, "--size", "8", "--partitions", "3") ++ args).toArray)

  test("a run stopped at a random batch and resumed delivers exactly the uninterrupted tail") {
    TestFiles.withTempDir("feed-resume") { dir =>
      checkStopAndResumeAtRandom(tars(dir.resolve("in"), Counts).toString, dir)
    }
  }

  test("stopping with 2 ranks and resuming with 3 delivers the rest of the epoch exactly once") {
    TestFiles.withTempDir("feed-n2m") { dir =>
      checkResumeOnAnotherWorldSize(tars(dir.resolve("in"), Counts).toString, dir)
    }
  }

  test("bad world sizes are usage errors, refused before Spark starts") {
    for ((ws, msg) <- Seq("four" -> "Invalid value for --world-size: 'four' (must be an integer > 0)",
        "-2" -> "Invalid value for --world-size: '-2' (must be an integer > 0)",
        "0" -> "Invalid value for --world-size: '0' (must be an integer > 0)")) {
      val err = new ByteArrayOutputStream()
      val code = SpindleMain.run(Array("feed", "--input", "/nonexistent", "--world-size", ws),
        new PrintStream(new ByteArrayOutputStream()), new PrintStream(err))
      assert(code == 2, ws)
      assert(err.toString.contains(msg), err.toString)
    }
    val e = intercept[picocli.CommandLine.ParameterException](
      FeedCommand.run(spark, Array("--input", "x", "--world-size", "2", "--stop-after-batches", "3")))
    assert(e.getMessage.contains("--stop-after-batches needs --save-state"))
  }

  test("a plan that gives a rank zero batches is refused with the numbers") {
    TestFiles.withTempDir("feed-big") { dir =>
      val in = tars(dir.resolve("in"), Seq(13, 7, 21, 9, 15))
      val e = intercept[IllegalArgumentException](feed(in, "--world-size", "4", "--batch-size", "20"))
      assert(e.getMessage.contains("65 samples would give each of 4 ranks zero batches of 20"))
      assert(e.getMessage.contains("a rank's share of 16 samples"))
    }
  }

  test("a resume state with another seed or from another manifest is refused, naming it") {
    TestFiles.withTempDir("feed-mismatch") { dir =>
      val a = tars(dir.resolve("a"), Seq(13, 7, 21))
      val b = tars(dir.resolve("b"), Seq(13, 7, 22))
      val saved = dir.resolve("state.json")
      feed(a, "--world-size", "2", "--batch-size", "4", "--seed", "7", "--stop-after-batches", "1",
        "--save-state", saved.toString)
      val seed = intercept[IllegalArgumentException](
        feed(a, "--world-size", "2", "--seed", "8", "--resume", saved.toString))
      assert(seed.getMessage.contains("seed is 7 in the state but 8 was requested"))
      val batch = intercept[IllegalArgumentException](
        feed(a, "--world-size", "2", "--batch-size", "5", "--resume", saved.toString))
      assert(batch.getMessage.contains("batch size is 4 in the state but 5 was requested"))
      val other = intercept[IllegalArgumentException](
        feed(b, "--world-size", "2", "--resume", saved.toString))
      assert(other.getMessage.contains("Resume state is for a different manifest"))
    }
  }
}
