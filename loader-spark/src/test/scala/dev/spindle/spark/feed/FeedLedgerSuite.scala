package dev.spindle.spark.feed

import java.io.{ByteArrayOutputStream, ObjectOutputStream}
import java.util.BitSet

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.batch.ImageBatch
import dev.spindle.spark.plan.{Digest, EpochPlan, Plans, Remainder}
import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.serve.BatchRun
import dev.spindle.spark.serve.FeedBatch
import dev.spindle.spark.serve.FeedSlice
import dev.spindle.spark.serve.PlannedBatches
import dev.spindle.spark.serve.SliceAccount
import dev.spindle.spark.serve.TaskOutcome

/**
 * The driver's exactly-once ledger over what tasks report ([[BatchRun]]s, no indices), and the
 * task-side accounts that build those runs from the batches a task produced ([[SliceAccount]]).
 */
class FeedLedgerSuite extends AnyFunSuite {
  import FeedLedgerSuite._

  private def ledger(plan: EpochPlan, stop: Int, outcomes: Seq[TaskOutcome]): FeedLedger = {
    val l = new FeedLedger(plan, Array.fill(plan.worldSize())(plan.rank(0).firstBatch()), stop)
    outcomes.foreach(l.add)
    l
  }

  /** What the tasks of a `feed` epoch report: one outcome per partition. */
  private def feedOutcomes(plan: EpochPlan, stop: Int, partitions: Int): Seq[TaskOutcome] =
    FeedPartitions.split(plan, stop, partitions).asScala.map(p => outcome(plan, p.asScala.toSeq)).toSeq

  test("tasks' runs give every rank the plan's digest and counts, however the partitions split ranks") {
    val rnd = new Random(5)
    var split = 0
    for (_ <- 0 until 200) {
      val m = Plans.manifest(Plans.randomSizes(rnd).map(_ + 40))
      var plan = EpochPlan.create(m, Plans.validSpec(rnd, m.totalSamples()))
      if (rnd.nextBoolean() && plan.batchesPerRank() > 1) { // a resumed plan starts mid-epoch
        val c = rnd.nextInt(plan.batchesPerRank())
        plan = plan.stateAfter(Array.fill(plan.worldSize())(c)).resume(m, plan.worldSize())
      }
      val first = plan.rank(0).firstBatch()
      val stop = first + 1 + rnd.nextInt(plan.batchesPerRank() - first)
      val parts = 1 + rnd.nextInt(12)
      val outcomes = feedOutcomes(plan, stop, parts)
      split += outcomes.flatMap(_.runs().asScala).count(r => r.digestFrom() < r.fromBatch())
      val results = ledger(plan, stop, outcomes).results().asScala
      for ((r, rank) <- results.zip(plan.ranks().asScala)) {
        val clue = s"$plan stop $stop partitions $parts rank ${rank.rank()}"
        assert(r.digest() == Digest.of(rank.indices(first, stop)), clue)
        assert(r.firstBatch() == first && r.batches() == stop - first, clue)
        val padded = (first until stop).map(rank.paddedIn(_).toLong).sum
        assert(r.padded() == padded && r.samples() == (stop - first).toLong * rank.batchSize() - padded, clue)
        assert(r.substituted() == 0L, clue)
        if (stop == rank.batches()) assert(r.digest() == rank.digest(), clue)
      }
    }
    assert(split > 20, "ranks whose share spans tasks: the last task hashes the earlier batches")
  }

  test("a task's result is O(slices): one run of 100,000 samples serializes as small as one of 8") {
    val big = EpochPlan.create(Plans.manifest(Seq.fill(100)(1000L)), FeedData.spec(1, 0, 1, 256))
    val small = EpochPlan.create(Plans.manifest(Seq(8L)), FeedData.spec(1, 0, 1, 4))
    val bigOutcome = outcome(big, Seq(new FeedSlice(0, 0, big.batchesPerRank())))
    val smallOutcome = outcome(small, Seq(new FeedSlice(0, 0, small.batchesPerRank())))
    assert(big.rank(0).samples() == 99840 && bigOutcome.runs().size == 1)
    val (b, s) = (serialized(bigOutcome), serialized(smallOutcome))
    info(s"serialized TaskOutcome: $b bytes for 390 batches of 256 (99,840 samples), $s for 2 of 4")
    assert(b == s, "the same size, whatever the samples")
    assert(b < 2048, s"$b bytes")
    // no per-sample or per-batch array anywhere in what a task reports
    for (c <- Seq(classOf[TaskOutcome], classOf[BatchRun]); f <- c.getRecordComponents) {
      assert(!f.getType.isArray, s"${c.getSimpleName}.${f.getName}")
    }
  }

  test("a retried attempt's runs reported again are taken once; batches not handed over again are counted") {
    val plan = EpochPlan.create(Plans.manifest(Seq(65L)), FeedData.spec(3, 0, 3, 4))
    val once = feedOutcomes(plan, 5, 4)
    val retried = once(1).runs().asScala.map(r => new BatchRun(r.first(), r.toBatch(), r.batchSize(),
      r.padded(), r.substituted(), r.batches(), r.digestFrom(), r.digest()))
    val again = new TaskOutcome(retried.asJava, java.util.List.of(), 0, 0, 0, 0, null, 0, 0)
    val l = ledger(plan, 5, once :+ again)
    val expected = ledger(plan, 5, once).results()
    assert(l.results() == expected)
    assert(l.duplicates() == retried.map(_.batches()).sum && l.duplicates() > 0)
    assert(l.refused() == retried.map(_.batches()).sum)
    assert(again.timelineCounts().images() == 0L, "what was not handed over is not counted as delivered")
  }

  test("a missing batch fails the epoch, naming the first one missing") {
    val plan = EpochPlan.create(Plans.manifest(Seq(65L)), FeedData.spec(3, 0, 3, 4))
    val outcomes = feedOutcomes(plan, 5, 4) // 15 units: partition 1 is rank 0's b3..b4 and rank 1's b0..b1
    val lost = ledger(plan, 5, outcomes.patch(1, Nil, 1))
    assert(intercept[IllegalStateException](lost.results()).getMessage == "Batch e0/l0/r0/b3 was never delivered")
    val gap = ledger(plan, 5, Seq(outcome(plan, Seq(new FeedSlice(0, 0, 5), new FeedSlice(1, 0, 2),
      new FeedSlice(1, 3, 5, 0), new FeedSlice(2, 0, 5)))))
    assert(intercept[IllegalStateException](gap.results()).getMessage == "Batch e0/l0/r1/b2 was never delivered")
  }

  test("one run reported twice with different contents, or two runs sharing some batches, fail naming them") {
    val plan = EpochPlan.create(Plans.manifest(Seq(65L)), FeedData.spec(3, 0, 3, 4))
    val outcomes = feedOutcomes(plan, 5, 3) // one rank per partition
    val r = outcomes(1).runs().get(0)
    val changed = new BatchRun(r.first(), r.toBatch(), r.batchSize(), r.padded(), r.substituted(), 0,
      r.digestFrom(), Digest.of(Array(1L)))
    val twice = ledger(plan, 5, outcomes)
    val e = intercept[IllegalStateException](twice.add(single(changed)))
    assert(e.getMessage == "Batches e0/l0/r1/b0..b4 were produced twice with different contents; the plan is not deterministic")
    val part = outcome(plan, Seq(new FeedSlice(1, 2, 4)))
    val overlap = intercept[IllegalStateException](ledger(plan, 5, outcomes).add(part))
    assert(overlap.getMessage == "Batch e0/l0/r1/b2 was reported by two task attempts in different runs, e0/l0/r1/b0..b4 and e0/l0/r1/b2..b3")
  }

  test("a run outside the rank's share of this epoch, or with other padding than planned, is refused") {
    val plan = EpochPlan.create(Plans.manifest(Seq(45L)), FeedData.spec(3, 0, 2, 4, Remainder.PAD))
    val l = ledger(plan, 3, Seq.empty)
    val beyond = intercept[IllegalStateException](l.add(outcome(plan, Seq(new FeedSlice(0, 2, 4)))))
    assert(beyond.getMessage == "Batches e0/l0/r0/b2..b3 were delivered, but rank 0 delivers batches 0..2 only")
    val other = EpochPlan.create(Plans.manifest(Seq(45L)), FeedData.spec(3, 1, 2, 4, Remainder.PAD))
    val epoch = intercept[IllegalStateException](l.add(outcome(other, Seq(new FeedSlice(0, 0, 1)))))
    assert(epoch.getMessage.startsWith("Batches e1/l0/r0/b0 were delivered, but the plan is of epoch 0"))

    val all = feedOutcomes(plan, 6, 2) // one rank per partition
    val (r, padded) = (0 to 1).map(r => (r, (0 until 6).map(plan.rank(r).paddedIn(_)).sum)).maxBy(_._2)
    assert(padded > 0, "PAD pads 3 of 48 rows")
    val run = all(r).runs().get(0)
    val wrong = new BatchRun(run.first(), run.toBatch(), run.batchSize(), 0, 0, 0, run.digestFrom(), run.digest())
    val l2 = ledger(plan, 6, all.patch(r, Seq(single(wrong)), 1))
    assert(intercept[IllegalStateException](l2.results()).getMessage ==
      s"Rank $r of epoch 0 received 0 padded rows in batches 0..5, the plan has $padded")
  }

  test("a task refuses a batch that is not the planned one, or not the next, before handing it over") {
    val plan = EpochPlan.create(Plans.manifest(Seq(65L)), FeedData.spec(3, 0, 2, 4))
    withBatches(plan) { make =>
      val account = new SliceAccount(new FeedSlice(1, 2, 5), plan.rank(1), new PlannedBatches())
      val wrongRows = plan.rank(1).batch(2).reverse
      val e = intercept[IllegalStateException](account.take(make(1, 2, wrongRows)))
      assert(e.getMessage.startsWith("Batch e0/l0/r1/b2 is not the planned one: 4 rows (planned 4), first difference at row 0"))
      val skipped = intercept[IllegalStateException](account.take(make(1, 3, plan.rank(1).batch(3))))
      assert(skipped.getMessage.startsWith("Batch e0/l0/r1/b3 arrived out of plan order: the task expected batch e0/l0/r1/b2"))
      account.take(make(1, 2, plan.rank(1).batch(2)))
      val short = intercept[IllegalStateException](account.run())
      assert(short.getMessage.startsWith("The task produced rank 1's batches up to e0/l0/r1/b3 only"))
    }
  }
}

object FeedLedgerSuite {
  /** Java-serialized bytes, as Spark ships a task's result. */
  def serialized(o: java.io.Serializable): Int = {
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(o)
    out.close()
    bytes.size()
  }

  def single(r: BatchRun): TaskOutcome =
    new TaskOutcome(java.util.List.of(r), java.util.List.of(), 0, 0, 0, 0, null, 0, 0)

  /** `f` gets a maker of Arrow batches (rank, batch, index column) with 1×1×1 images. */
  def withBatches[T](plan: EpochPlan)(f: ((Int, Int, Array[Long]) => FeedBatch) => T): T = {
    val allocator = new RootAllocator()
    val batch = new ImageBatch(allocator, 1, 1, 1, plan.spec().batchSize())
    try f { (rank, k, indices) =>
      batch.reset()
      indices.zipWithIndex.foreach { case (index, row) => batch.setRow(row, 0, "", index) }
      val root = batch.seal(indices.length)
      new FeedBatch(plan.rank(rank).batchKey(k), root, plan.rank(rank).paddedIn(k), new BitSet())
    } finally {
      batch.close()
      allocator.close()
    }
  }

  /** What a task reports for `slices`: every planned batch built, checked and hashed in order. */
  def outcome(plan: EpochPlan, slices: Seq[FeedSlice]): TaskOutcome = withBatches(plan) { make =>
    val planned = new PlannedBatches()
    val runs = slices.map { s =>
      val account = new SliceAccount(s, plan.rank(s.rank()), planned)
      (s.fromBatch() until s.toBatch()).foreach(k => account.take(make(s.rank(), k, plan.rank(s.rank()).batch(k))))
      account.run()
    }
    new TaskOutcome(runs.asJava, java.util.List.of(), 0, 0, 0, 0, null, 0, 0)
  }
}
