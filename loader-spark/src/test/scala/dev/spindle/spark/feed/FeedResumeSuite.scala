package dev.spindle.spark.feed

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.cli.SpindleMain
import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.plan.{Digest, EpochPlan, LoaderState}
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/** Stopping, saving and resuming through the feed command; bad input. */
class FeedResumeSuite extends AnyFunSuite with SparkFixture {
  import FeedData._

  private def feed(in: Path, args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in.toString, "--size", "8", "--partitions", "3") ++ args).toArray)

  private def state(file: Path) = LoaderState.fromJson(Files.readString(file))

  test("a run stopped at a random batch and resumed delivers exactly the uninterrupted tail") {
    val seed = System.nanoTime()
    val rnd = new Random(seed)
    TestFiles.withTempDir("feed-resume") { dir =>
      val in = tars(dir.resolve("in"), Seq(13, 7, 21, 9, 15)) // 65 samples: 8 batches of 4 per rank
      val m = manifest(in)
      val common = Seq("--world-size", "2", "--batch-size", "4", "--seed", "5", "--epochs", "2")
      val full = feed(in, common: _*)
      val plans = Seq(0, 1).map(e => EpochPlan.create(m, spec(5, e, 2, 4)))
      assert(Seq(0, 1).map(digests(full, _)) == plans.map(_.ranks().asScala.map(_.digest()).toSeq))

      val k = 1 + rnd.nextInt(15)
      val (epoch, consumed) = (k / 8, k % 8)
      val saved = dir.resolve("state.json")
      val stopped = feed(in, (common ++ Seq("--stop-after-batches", k.toString, "--save-state", saved.toString)): _*)
      assert(state(saved).epoch() == epoch, s"seed $seed, k $k")
      assert(state(saved).batchesConsumed().toSeq == Seq(consumed, consumed))
      assert(stopped.get("samples_read") == k * 2L * 4, "the stopped run read only what it delivered")

      val resumed = feed(in, (common ++ Seq("--resume", saved.toString)): _*)
      if (consumed > 0) {
        val tail = plans(epoch).ranks().asScala.map(r => Digest.of(r.indices(consumed, 8))).toSeq
        val head = plans(epoch).ranks().asScala.map(r => Digest.of(r.indices(0, consumed))).toSeq
        assert(digests(resumed, epoch) == tail, s"seed $seed, k $k")
        assert(digests(stopped, epoch) == head, s"seed $seed, k $k")
        assert(ranks(resumed).filter(_("epoch") == epoch).forall(_("first_batch") == consumed))
      }
      if (epoch == 0) assert(digests(resumed, 1) == digests(full, 1), s"seed $seed, k $k")
      assert(resumed.get("images") == (16 - k) * 2L * 4)
      assert(resumed.get("samples_read") == resumed.get("images"), "consumed samples were not read again")
      assert(resumed.get("state") == full.get("state"))
    }
  }

  test("stopping with 2 ranks and resuming with 3 delivers the rest of the epoch exactly once") {
    TestFiles.withTempDir("feed-n2m") { dir =>
      val in = tars(dir.resolve("in"), Seq(13, 7, 21, 9, 15))
      val m = manifest(in)
      val saved = dir.resolve("state.json")
      val first = feed(in, "--world-size", "2", "--batch-size", "4", "--stop-after-batches", "3",
        "--save-state", saved.toString)
      val resumed = feed(in, "--world-size", "3", "--resume", saved.toString)

      val leg0 = EpochPlan.create(m, spec(0, 0, 2, 4))
      val leg1 = state(saved).resume(m, 3)
      assert(digests(resumed, 0) == leg1.ranks().asScala.map(_.digest()).toSeq)
      assert(ranks(resumed).forall(_("leg") == 1))
      val before = leg0.ranks().asScala.flatMap(_.indices(0, 3).toSeq)
      val after = leg1.ranks().asScala.flatMap(r => r.indices(0, r.batches()).take(r.realSamples()).toSeq)
      val epoch = leg0.ranks().asScala.flatMap(r => r.indices(0, r.batches()).toSeq)
      assert((before ++ after).sorted == epoch.sorted, "every sample of the epoch once")
      val delivered = ranks(first).map(_("samples").asInstanceOf[Long]).sum +
        ranks(resumed).map(_("samples").asInstanceOf[Long]).sum
      assert(delivered == 64L) // 65 samples, DROP_LAST at 2 × 4
      assert(state(saved).worldSize() == 2)
      assert(resumed.get("state").asInstanceOf[java.util.Map[String, AnyRef]].get("epoch") == 1)
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
