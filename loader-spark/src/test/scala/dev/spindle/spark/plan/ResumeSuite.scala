package dev.spindle.spark.plan

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import Plans._
import dev.spindle.spark.manifest.ManifestFingerprint

class ResumeSuite extends AnyFunSuite {

  /** Round-trips through JSON, as a trainer's checkpoint would. */
  private def saved(state: LoaderState): LoaderState = LoaderState.fromJson(state.toJson())

  test("resuming with the same world size at a random point delivers exactly the uninterrupted tail") {
    val rnd = new Random(21)
    forRandomPlans(rnd, 200) { (m, spec, plan) =>
      val c = rnd.nextInt(plan.batchesPerRank())
      val state = plan.stateAfter(Array.fill(spec.worldSize())(c))
      val resumed = saved(state).resume(m, spec.worldSize())
      assert(resumed.leg() == 0)
      assert(resumed.stateAtStart() == state)
      for (r <- 0 until spec.worldSize()) {
        val tail = plan.rank(r).indices(c, plan.batchesPerRank())
        assert(resumed.rank(r).firstBatch() == c)
        assert(delivered(resumed.rank(r)).toSeq == tail.toSeq)
        assert(resumed.rank(r).digest() == Digest.of(tail))
        assert(resumed.rank(r).remainingBatches() == plan.batchesPerRank() - c)
      }
    }
  }

  test("resuming N -> M delivers each remaining sample exactly once, with equal batches per rank") {
    val rnd = new Random(22)
    var cases = 0
    forRandomPlans(rnd, 200) { (m, spec, plan) =>
      // DDP ranks move in lockstep, but the state allows any progress per rank.
      val consumed = Array.fill(spec.worldSize())(rnd.nextInt(plan.batchesPerRank() + 1))
      // With nothing consumed, resuming is a fresh start (tested below) and may be refused.
      consumed(0) = math.max(consumed(0), 1)
      val before = rankSeqs(plan).zip(consumed).flatMap { case (r, c) =>
        (0 until math.min(c * r.batchSize(), r.realSamples())).map(r.index)
      }
      val state = saved(plan.stateAfter(consumed))
      val left = rankSeqs(plan).flatMap(realDelivered).diff(before)
      if (consumed.forall(_ == plan.batchesPerRank())) {
        assert(state.epoch() == spec.epoch() + 1)
      } else if (left.nonEmpty) {
        // (With only padding left, a resume starts the next epoch: covered by the chain test.)
        val newWorld = 1 + rnd.nextInt(9)
        val resumed = state.resume(m, newWorld)
        val after = rankSeqs(resumed).flatMap(realDelivered)
        cases += 1
        assert(resumed.epoch() == spec.epoch())
        assert(after.sorted == left.sorted, s"$spec, consumed ${consumed.toSeq}, M=$newWorld")
        assert(after.distinct.size == after.size)
        assert(rankSeqs(resumed).map(_.remainingBatches()).distinct.size == 1)
        assert(resumed.rank(0).remainingBatches() >= 1)
        assert(resumed.worldSize() == newWorld)
      }
    }
    assert(cases > 100)
  }

  test("a chain of resumes with changing world sizes covers the epoch exactly once") {
    val rnd = new Random(23)
    forRandomPlans(rnd, 100) { (m, spec, first) =>
      var plan = first
      val expected = rankSeqs(plan).flatMap(realDelivered).sorted
      val seen = scala.collection.mutable.ArrayBuffer[Long]()
      var legs = 0
      while (plan.epoch() == spec.epoch()) {
        val stop = rankSeqs(plan).map { r =>
          if (legs >= 4) r.batches() else r.firstBatch() + rnd.nextInt(r.remainingBatches() + 1)
        }.toArray
        // Leg 0 must make progress: an untouched epoch restarts fresh, which may be refused.
        if (legs == 0) stop(0) = math.max(stop(0), 1)
        for ((r, c) <- rankSeqs(plan).zip(stop)) {
          seen ++= (r.firstBatch() * r.batchSize() until math.min(c * r.batchSize(), r.realSamples())).map(r.index)
        }
        val state = saved(plan.stateAfter(stop))
        legs += 1
        val realLeft = rankSeqs(plan).zip(stop).map { case (r, c) => math.max(0, r.realSamples() - c * r.batchSize()) }.sum
        // Once no real sample is left, the next plan is a fresh epoch (which a small world may be refused).
        plan = if (realLeft > 0) state.resume(m, 1 + rnd.nextInt(6)) else EpochPlan.create(m, spec.withEpoch(spec.epoch() + 1))
      }
      assert(seen.sorted == expected, s"$spec after $legs legs")
      assert(plan.leg() == 0 && plan.rank(0).firstBatch() == 0)
    }
  }

  test("ranks at different points are re-split so that every rank still gets equal batches") {
    val m = manifest(Seq(400))
    val plan = EpochPlan.create(m, PlanSpec.of(3, 0, 4, 10, Remainder.DROP_LAST))
    val resumed = plan.stateAfter(Array(3, 4, 3, 5)).resume(m, 4)
    assert(resumed.leg() == 1)
    assert(rankSeqs(resumed).map(_.remainingBatches()).distinct.size == 1)
    assert(resumed.rank(0).batchKey(0) == new BatchKey(0, 1, 0, 0))
  }

  test("a finished epoch moves the state to the next epoch with nothing consumed") {
    val m = manifest(Seq(100, 100))
    val plan = EpochPlan.create(m, PlanSpec.of(3, 4, 2, 10, Remainder.DROP_LAST))
    val state = plan.stateAtEnd()
    assert(state.epoch() == 5)
    assert(state.batchesConsumed().toSeq == Seq(0, 0))
    assert(state.legs().size() == 1)
    val next = state.resume(m, 2)
    assert(rankSeqs(next).map(_.digest()) == rankSeqs(EpochPlan.create(m, PlanSpec.of(3, 5, 2, 10, Remainder.DROP_LAST))).map(_.digest()))
  }

  test("resuming at the start of an epoch with another world size is that epoch's fresh plan") {
    val m = manifest(Seq(100, 60))
    val spec = PlanSpec.of(3, 1, 2, 10, Remainder.PAD)
    val state = LoaderState.initial(m, spec)
    val resumed = state.resume(m, 4)
    val fresh = EpochPlan.create(m, spec.withWorldSize(4))
    assert(rankSeqs(resumed).map(_.digest()) == rankSeqs(fresh).map(_.digest()))
    assert(resumed.leg() == 0)
    val e = intercept[IllegalArgumentException](state.resume(m, 17))
    assert(e.getMessage.contains("zero batches"), e.getMessage)
  }

  test("the rest of an epoch is padded, never dropped, when it does not fill the new ranks") {
    val m = manifest(Seq(100))
    val plan = EpochPlan.create(m, PlanSpec.of(3, 0, 2, 10, Remainder.DROP_LAST))
    val resumed = plan.stateAfter(Array(4, 5)).resume(m, 4)
    assert(resumed.samplesToDeliver() == 10)
    assert(rankSeqs(resumed).map(_.realSamples()) == Seq(3, 3, 2, 2))
    assert(rankSeqs(resumed).map(_.batches()) == Seq(1, 1, 1, 1))
    assert(rankSeqs(resumed).flatMap(realDelivered).toSet == plan.rank(0).batch(4).toSet)
  }

  test("a state from a different manifest is refused, naming both") {
    val m = manifest(Seq(100, 100))
    val state = EpochPlan.create(m, PlanSpec.of(3, 0, 2, 10, Remainder.DROP_LAST)).stateAfter(Array(2, 2))
    val other = manifest(Seq(100, 101))
    val e = intercept[IllegalArgumentException](state.resume(other, 2))
    assert(e.getMessage.contains("different manifest"), e.getMessage)
    assert(e.getMessage.contains("(2 shards, 200 samples)"), e.getMessage)
    assert(e.getMessage.contains("(2 shards, 201 samples)"), e.getMessage)
  }

  test("the manifest fingerprint ignores where the data set lives and when it was copied") {
    val here = manifest(Seq(10, 20), "file:/data")
    val there = manifest(Seq(10, 20), "hdfs://nn/datasets/x")
    assert(ManifestFingerprint.of(here) == ManifestFingerprint.of(there))
    val state = EpochPlan.create(here, PlanSpec.of(1, 0, 1, 5, Remainder.DROP_LAST)).stateAfter(Array(2))
    assert(state.resume(there, 1).rank(0).firstBatch() == 2)
  }

  test("requested settings that differ from the state are refused, each mismatch named") {
    val m = manifest(Seq(100))
    val state = LoaderState.initial(m, new PlanSpec(7, 0, 2, 10, Remainder.DROP_LAST, 64))
    state.requireSettings(new PlanSpec(7, 3, 5, 10, Remainder.DROP_LAST, 64))
    val e = intercept[IllegalArgumentException](
      state.requireSettings(new PlanSpec(8, 0, 2, 12, Remainder.DROP_LAST, 64)))
    assert(e.getMessage.contains("seed is 7 in the state but 8 was requested"), e.getMessage)
    assert(e.getMessage.contains("batch size is 10 in the state but 12 was requested"), e.getMessage)
    assert(!e.getMessage.contains("window"), e.getMessage)
  }

  test("a state claiming more batches than its split has is refused") {
    val m = manifest(Seq(100))
    val plan = EpochPlan.create(m, PlanSpec.of(3, 0, 2, 10, Remainder.DROP_LAST))
    intercept[IllegalArgumentException](plan.stateAfter(Array(6, 1)))
    val forged = new LoaderState(plan.manifest(), 3, 0, 10, Remainder.DROP_LAST,
      PlanSpec.DEFAULT_SHUFFLE_WINDOW, java.util.List.of(new LoaderState.Leg(2, Array(6, 1))))
    val e = intercept[IllegalArgumentException](forged.resume(m, 2))
    assert(e.getMessage.contains("rank 0 consumed 6 batches"), e.getMessage)
  }
}
