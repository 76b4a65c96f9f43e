package dev.spindle.spark.feed

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.plan.{Digest, EpochPlan, LoaderState}
import dev.spindle.spark.testkit.SparkFixture
import org.scalatest.funsuite.AnyFunSuite

/**
 * What `feed` guarantees whatever the input format, checked on an input holding FeedData's
 * 65-sample layout (shards of 13, 7, 21, 9 and 15 samples): tar, .tgz, brace patterns and Parquet
 * suites run the same checks.
 */
trait FeedProperties { self: AnyFunSuite with SparkFixture =>
  import FeedData._

  /** The sample counts every input given to these checks holds, shard by shard. */
  val Counts: Seq[Int] = Seq(13, 7, 21, 9, 15)

  protected def feedOn(in: String, args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in, "--size", "8") ++ args).toArray)

  private def state(file: Path) = LoaderState.fromJson(Files.readString(file))

  /** Per-rank digests equal the plan's over these partition and thread counts, two epochs. */
  def checkDigests(in: String, partitions: Seq[Int], threads: Seq[Int]): Unit = {
    val m = manifestOf(in)
    val expected = Seq(0, 1).map(e => planDigests(m, spec(7, e, 3, 4)))
    assert(expected(0) != expected(1), "epochs must differ")
    for (p <- partitions; t <- threads) {
      val r = feedOn(in, "--world-size", "3", "--batch-size", "4", "--seed", "7", "--epochs", "2",
        "--partitions", p.toString, "--threads", t.toString)
      assert(digests(r, 0) == expected(0), s"partitions $p threads $t")
      assert(digests(r, 1) == expected(1), s"partitions $p threads $t")
      assert(ranks(r).map(_("batches")) == Seq.fill(6)(5)) // 65 samples / (3 ranks × 4) = 5
      assert(r.get("images") == 120L)
      assert(r.get("failures") == 0L)
      assert(r.get("samples_read") == 120L) // every delivered row decoded once, nothing more
    }
  }

  /** A run stopped after batch `k` (1..15) and resumed delivers exactly the uninterrupted tail. */
  def checkStopAndResume(in: String, k: Int, dir: Path): Unit = {
    val m = manifestOf(in)
    val common = Seq("--world-size", "2", "--batch-size", "4", "--seed", "5", "--epochs", "2",
      "--partitions", "3")
    val full = feedOn(in, common: _*)
    val plans = Seq(0, 1).map(e => EpochPlan.create(m, spec(5, e, 2, 4)))
    assert(Seq(0, 1).map(digests(full, _)) == plans.map(_.ranks().asScala.map(_.digest()).toSeq))

    val (epoch, consumed) = (k / 8, k % 8)
    val saved = dir.resolve(s"state-$k.json")
    val stopped = feedOn(in, (common ++ Seq("--stop-after-batches", k.toString, "--save-state", saved.toString)): _*)
    assert(state(saved).epoch() == epoch, s"k $k")
    assert(state(saved).batchesConsumed().toSeq == Seq(consumed, consumed))
    assert(stopped.get("samples_read") == k * 2L * 4, "the stopped run read only what it delivered")

    val resumed = feedOn(in, (common ++ Seq("--resume", saved.toString)): _*)
    if (consumed > 0) {
      val tail = plans(epoch).ranks().asScala.map(r => Digest.of(r.indices(consumed, 8))).toSeq
      val head = plans(epoch).ranks().asScala.map(r => Digest.of(r.indices(0, consumed))).toSeq
      assert(digests(resumed, epoch) == tail, s"k $k")
      assert(digests(stopped, epoch) == head, s"k $k")
      assert(ranks(resumed).filter(_("epoch") == epoch).forall(_("first_batch") == consumed))
    }
    if (epoch == 0) assert(digests(resumed, 1) == digests(full, 1), s"k $k")
    assert(resumed.get("images") == (16 - k) * 2L * 4)
    assert(resumed.get("samples_read") == resumed.get("images"), "consumed samples were not read again")
    assert(resumed.get("state") == full.get("state"))
  }

  /** `checkStopAndResume` at a random batch; the seed is in the failure message. */
  def checkStopAndResumeAtRandom(in: String, dir: Path): Unit = {
    val seed = System.nanoTime()
    withClue(s"seed $seed: ")(checkStopAndResume(in, 1 + new Random(seed).nextInt(15), dir))
  }

  /** Stopping with 2 ranks and resuming with 3 delivers the rest of the epoch exactly once. */
  def checkResumeOnAnotherWorldSize(in: String, dir: Path): Unit = {
    val m = manifestOf(in)
    val saved = dir.resolve("state-n2m.json")
    val first = feedOn(in, "--world-size", "2", "--batch-size", "4", "--partitions", "3",
      "--stop-after-batches", "3", "--save-state", saved.toString)
    val resumed = feedOn(in, "--world-size", "3", "--partitions", "3", "--resume", saved.toString)

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
