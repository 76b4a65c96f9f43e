package dev.spindle.spark.plan

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import Plans._

class EpochPlanSuite extends AnyFunSuite {

  test("every rank gets the same number of full batches, and at least one") {
    val rnd = new Random(11)
    forRandomPlans(rnd, 300) { (m, spec, plan) =>
      assert(plan.worldSize() == spec.worldSize())
      assert(spec.freshBatchesPerRank(m.totalSamples()) == plan.batchesPerRank(), s"$spec")
      for (r <- rankSeqs(plan)) {
        assert(r.batches() == plan.batchesPerRank(), s"$spec $r")
        assert(r.batches() >= 1)
        assert(r.samples() == r.batches() * spec.batchSize())
        assert(r.firstBatch() == 0)
      }
    }
  }

  test("the ranks' real entries are the epoch minus the drop-last remainder, each sample once") {
    val rnd = new Random(12)
    forRandomPlans(rnd, 300) { (m, spec, plan) =>
      val n = m.totalSamples()
      val real = rankSeqs(plan).flatMap(realDelivered)
      val round = spec.worldSize().toLong * spec.batchSize()
      val expected = if (spec.remainder() == Remainder.PAD) n else n - n % round
      assert(real.size == expected, s"$spec over $n samples")
      assert(real.distinct.size == real.size, "a sample was planned twice")
      assert(real.forall(i => i >= 0 && i < n))
      if (spec.remainder() == Remainder.PAD) assert(real.toSet == (0L until n).toSet)
    }
  }

  test("padding is marked, comes last in a rank, and repeats that rank's own samples") {
    val rnd = new Random(13)
    var padded = 0
    forRandomPlans(rnd, 300) { (m, spec, plan) =>
      val n = m.totalSamples()
      val entries = rankSeqs(plan).map(_.samples().toLong).sum
      val pads = rankSeqs(plan).map(r => r.samples() - r.realSamples()).sum
      if (spec.remainder() == Remainder.PAD) assert(pads == entries - n) else assert(pads == 0)
      for (r <- rankSeqs(plan); p <- 0 until r.samples()) {
        assert(r.isPadded(p) == (p >= r.realSamples()))
        if (r.isPadded(p)) {
          assert((0 until r.realSamples()).map(r.index).contains(r.index(p)))
          padded += 1
        }
      }
      for (r <- rankSeqs(plan); k <- 0 until r.batches()) {
        assert(r.paddedIn(k) == (k * r.batchSize() until (k + 1) * r.batchSize()).count(r.isPadded))
      }
    }
    assert(padded > 0, "the random cases never exercised padding")
  }

  test("padding is spread over ranks: real shares differ by at most one sample") {
    val m = manifest(Seq(33))
    val plan = EpochPlan.create(m, PlanSpec.of(5, 0, 4, 8, Remainder.PAD))
    assert(rankSeqs(plan).map(_.realSamples()) == Seq(9, 8, 8, 8))
    assert(rankSeqs(plan).map(_.batches()) == Seq(2, 2, 2, 2))
  }

  test("the same inputs give the same plan; the plan is a pure function of its inputs") {
    val rnd = new Random(14)
    for (_ <- 0 until 50) {
      val sizes = randomSizes(rnd)
      val n = sizes.sum
      if (n > 0) {
        val spec = validSpec(rnd, n)
        val a = EpochPlan.create(manifest(sizes), spec)
        val b = EpochPlan.create(manifest(sizes), spec)
        assert(rankSeqs(a).map(r => delivered(r).toSeq) == rankSeqs(b).map(r => delivered(r).toSeq))
        assert(rankSeqs(a).map(_.digest()) == rankSeqs(b).map(_.digest()))
      }
    }
  }

  test("ranks take contiguous parts of one epoch order, whatever the world size") {
    val m = manifest(Seq(100, 57, 0, 211))
    val whole = EpochPlan.create(m, new PlanSpec(9, 2, 1, 1, Remainder.DROP_LAST, 50))
    val order = delivered(whole.rank(0)).toSeq
    for (w <- Seq(2, 3, 4, 8)) {
      val plan = EpochPlan.create(m, new PlanSpec(9, 2, w, 4, Remainder.DROP_LAST, 50))
      val concatenated = rankSeqs(plan).flatMap(r => delivered(r).toSeq)
      assert(concatenated == order.take(concatenated.size), s"world size $w")
    }
  }

  test("batch keys are deterministic and name epoch, leg, rank and batch") {
    val plan = EpochPlan.create(manifest(Seq(64)), PlanSpec.of(1, 3, 2, 8, Remainder.DROP_LAST))
    assert(plan.rank(1).batchKey(2) == new BatchKey(3, 0, 1, 2))
    assert(plan.rank(1).batchKey(2).toString == "e3/l0/r1/b2")
    intercept[IndexOutOfBoundsException](plan.rank(1).batchKey(4))
  }

  test("a plan that gives a rank zero batches is refused with the numbers") {
    val m = manifest(Seq(10))
    for (policy <- Remainder.values()) {
      val e = intercept[IllegalArgumentException](EpochPlan.create(m, PlanSpec.of(1, 0, 4, 8, policy)))
      assert(e.getMessage.contains("10 samples"), e.getMessage)
      assert(e.getMessage.contains("4 ranks"), e.getMessage)
      assert(e.getMessage.contains("zero batches"), e.getMessage)
      assert(e.getMessage.contains("share of 2 samples"), e.getMessage)
    }
  }

  test("a batch size larger than a rank's share is refused, even with padding") {
    val m = manifest(Seq(50, 50))
    val e = intercept[IllegalArgumentException](EpochPlan.create(m, PlanSpec.of(1, 0, 4, 26, Remainder.PAD)))
    assert(e.getMessage.contains("share of 25 samples"), e.getMessage)
    assert(EpochPlan.create(m, PlanSpec.of(1, 0, 4, 25, Remainder.PAD)).batchesPerRank() == 1)
  }

  test("EXACT refuses a plan that cannot be equal without padding, naming the remainder") {
    val m = manifest(Seq(100))
    val e = intercept[IllegalArgumentException](EpochPlan.create(m, PlanSpec.of(1, 0, 3, 8, Remainder.EXACT)))
    assert(e.getMessage.contains("100 samples"), e.getMessage)
    assert(e.getMessage.contains("= 24 per round"), e.getMessage)
    assert(e.getMessage.contains("4 left over"), e.getMessage)
    assert(EpochPlan.create(m, PlanSpec.of(1, 0, 5, 4, Remainder.EXACT)).batchesPerRank() == 5)
  }

  test("non-numeric, zero and negative counts are refused, naming the value") {
    val e1 = intercept[IllegalArgumentException](PlanSpec.parseCount("world size", "four"))
    assert(e1.getMessage == "Invalid world size: \"four\" (must be a whole number >= 1)")
    val e2 = intercept[IllegalArgumentException](PlanSpec.parseCount("world size", "-2"))
    assert(e2.getMessage == "Invalid world size: -2 (must be >= 1)")
    assert(PlanSpec.parseCount("batch size", " 64 ") == 64)
    val e3 = intercept[IllegalArgumentException](PlanSpec.of(1, 0, 0, 8, Remainder.PAD))
    assert(e3.getMessage == "Invalid world size: 0 (must be >= 1)")
    val e4 = intercept[IllegalArgumentException](PlanSpec.of(1, 0, 2, -8, Remainder.PAD))
    assert(e4.getMessage == "Invalid batch size: -8 (must be >= 1)")
    val e5 = intercept[IllegalArgumentException](PlanSpec.of(1, -1, 2, 8, Remainder.PAD))
    assert(e5.getMessage == "Invalid epoch: -1 (must be >= 0)")
  }
}
