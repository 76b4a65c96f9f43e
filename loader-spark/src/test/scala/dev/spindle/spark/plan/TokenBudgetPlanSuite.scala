package dev.spindle.spark.plan

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import Plans._

/**
 * Plans of batches packed to a token budget (package documentation, "Token budgets"): the vectors
 * were printed by reference_plan.py (next to this file, written from package-info.java alone), the
 * properties hold for random manifests, lengths and settings.
 */
class TokenBudgetPlanSuite extends AnyFunSuite {
  private val m = manifest(Seq(5, 0, 7, 3, 9, 4))
  private val lengths = {
    val l = Array.tabulate(28)(i => (i * 7 + 3) % 11 + 1)
    l(13) = 15
    l
  }

  private def budget(tokens: Int, ls: Array[Int] = lengths) =
    TokenBudget.of("tokens", tokens).withLengths(ls)

  private def spec(seed: Long, epoch: Int, world: Int, rows: Int, tokens: Int, rem: Remainder,
      window: Int, ls: Array[Int] = lengths): PlanSpec =
    new PlanSpec(seed, epoch, world, rows, rem, window).withBudget(budget(tokens, ls))

  /** Each rank's batches as lists of dataset indices. */
  private def batches(r: RankPlan): Seq[Seq[Long]] =
    (r.firstBatch() until r.batches()).map(k => r.batch(k).toSeq)

  test("a DROP_LAST plan packed to a budget matches the reference, the last batches dropped") {
    val p = rankSeqs(EpochPlan.create(m, spec(42, 0, 5, 4, 20, Remainder.DROP_LAST, 8)))
    assert(batches(p(0)) == Seq(Seq(16, 21, 19, 20), Seq(15, 22)))
    assert(batches(p(1)) == Seq(Seq(18, 17), Seq(3, 2)))
    assert(batches(p(2)) == Seq(Seq(1), Seq(4, 5)))
    assert(batches(p(3)) == Seq(Seq(23, 6, 0), Seq(26, 9, 8)))
    assert(batches(p(4)) == Seq(Seq(7, 10), Seq(11, 24, 25)))
    assert(p(0).digest() == "1f3151d76b1658dc3aad5c49576f87770ab7818cb4cab2c3119786560c056c5a")
    assert(p(3).digest() == "5421fc00c756cd9bff2bf9beb4b998c50741d52275f106d6d9b8a539a24b474e")
  }

  test("a PAD plan packed to a budget matches the reference; a sample over the budget is alone") {
    val p = rankSeqs(EpochPlan.create(m, spec(-1, 3, 3, 3, 14, Remainder.PAD, 5)))
    assert(batches(p(0)) == Seq(Seq(0, 27, 25), Seq(26), Seq(24), Seq(3, 2), Seq(1), Seq(4), Seq(15)))
    assert(batches(p(1)) == Seq(Seq(16), Seq(18, 17, 20), Seq(19), Seq(12), Seq(21), Seq(13), Seq(16)))
    assert(batches(p(2)) == Seq(Seq(22), Seq(23), Seq(8, 14, 6), Seq(7), Seq(5), Seq(9, 11, 10), Seq(22)))
    assert(p(1).paddedIn(6) == 1 && p(1).paddedIn(5) == 0 && p(0).paddedIn(6) == 0)
    assert(p(1).batchTokens(5) == 15) // sample 13, over the budget of 14: a batch of its own
    assert(p.map(_.realSamples()) == Seq(10, 8, 10))
    assert(p(2).digest() == "e3caad5e17bfa0c47caa1e1b0c3085db0f4ed6ea5bc2617454dec95ee7143854")
  }

  test("an EXACT plan packed to a budget matches the reference") {
    val p = rankSeqs(EpochPlan.create(m, spec(7, 2, 2, 8, 23, Remainder.EXACT, 1000)))
    assert(batches(p(0)) == Seq(Seq(18, 24, 2), Seq(22, 17, 0, 4), Seq(15, 16, 6, 9), Seq(12, 14, 3),
      Seq(23, 10)))
    assert(batches(p(1)) == Seq(Seq(26, 5), Seq(7), Seq(13, 21), Seq(27, 20, 19, 25, 11), Seq(1, 8)))
    assert(p(1).digest() == "07906070f3bfef3a2bf4d7e39107894b6ab3b2c6ccbf183d285fef885aaa06a9")
  }

  test("a budgeted 2 -> 3 resume matches the reference, through the state's JSON") {
    val plan = EpochPlan.create(m, spec(42, 0, 2, 4, 20, Remainder.DROP_LAST, 8))
    val json = plan.stateAfter(Array(1, 3)).toJson()
    val node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json).get("batchTokens")
    assert(node.get("field").asText() == "tokens" && node.get("tokens").asInt() == 20)
    val r = rankSeqs(LoaderState.fromJson(json).withBudget(budget(20)).resume(m, 3))
    assert(batches(r(0)) == Seq(Seq(15, 22), Seq(18, 17), Seq(3, 2)))
    assert(batches(r(1)) == Seq(Seq(1), Seq(4, 5), Seq(11, 24, 25)))
    assert(batches(r(2)) == Seq(Seq(27, 14, 12), Seq(13), Seq(27, 14, 12)))
    assert(r(2).paddedIn(2) == 3)
    assert(r(1).digest() == "baa584355b8f845ea1532950fe743f84ed52b79e7dd461fb6bca3c64544b67ca")
  }

  private def randomBudgeted(rnd: Random): Option[(dev.spindle.spark.manifest.Manifest, PlanSpec)] = {
    val mf = manifest(randomSizes(rnd))
    val n = mf.totalSamples().toInt
    if (n == 0) return None
    val ls = Array.fill(n)(if (rnd.nextInt(50) == 0) 500 else 1 + rnd.nextInt(60))
    val rem = Remainder.values()(rnd.nextInt(2)) // DROP_LAST or PAD; EXACT rarely divides
    val s = spec(rnd.nextLong(), rnd.nextInt(100), 1 + rnd.nextInt(6), 1 + rnd.nextInt(12),
      40 + rnd.nextInt(200), rem, Seq(1, 7, 64, 1000)(rnd.nextInt(4)), ls)
    scala.util.Try(EpochPlan.create(mf, s)).toOption.map(_ => (mf, s))
  }

  test("packed batches respect rows and budget, windows, equal counts, and cover the epoch once") {
    val rnd = new Random(32)
    var plans = 0
    while (plans < 150) {
      randomBudgeted(rnd).foreach { case (mf, s) =>
        plans += 1
        val plan = EpochPlan.create(mf, s)
        val ranks = rankSeqs(plan)
        assert(ranks.map(_.batches()).distinct.size == 1)
        val b = s.budget()
        val real = ranks.flatMap { r =>
          (0 until r.batches()).flatMap { k =>
            val idx = r.batch(k)
            assert(idx.length >= 1 && idx.length <= s.batchSize() && idx.length == r.batchRows(k))
            val tokens = idx.map(i => b.length(i).toLong).sum
            assert(tokens == r.batchTokens(k))
            assert(tokens <= b.tokens() || idx.length == 1, s"batch $k of $r holds $tokens tokens")
            if (r.paddedIn(k) == 0) idx.toSeq else Seq.empty
          }
        }
        assert(real.distinct.size == real.size)
        if (s.remainder() == Remainder.PAD) {
          assert(real.sorted == (0L until mf.totalSamples()))
        }
        // No batch crosses a window: every batch's samples are in one window of the epoch order.
        val seq = EpochSequence.of(mf, s.seed(), s.epoch(), s.shuffleWindow())
        val order = new Array[Long](mf.totalSamples().toInt)
        seq.copy(0, order.length, order, 0)
        val pos = order.zipWithIndex.toMap
        for (r <- ranks; k <- 0 until r.batches()) {
          assert(r.batch(k).map(i => pos(i) / s.shuffleWindow()).distinct.length == 1)
        }
      }
    }
  }

  test("resuming a budgeted plan N -> M delivers each remaining sample once, equal batches per rank") {
    val rnd = new Random(7)
    var cases = 0
    while (cases < 80) {
      randomBudgeted(rnd).foreach { case (mf, s) =>
        val plan = EpochPlan.create(mf, s)
        val consumed = Array.fill(plan.worldSize())(rnd.nextInt(plan.batchesPerRank() + 1))
        if (!consumed.forall(_ == plan.batchesPerRank())) {
          cases += 1
          val before = rankSeqs(plan).zip(consumed).flatMap { case (r, c) =>
            (0 until c).filter(r.paddedIn(_) == 0).flatMap(r.batch(_).toSeq)
          }
          val all = rankSeqs(plan).flatMap(r => (0 until r.batches()).filter(r.paddedIn(_) == 0)
            .flatMap(r.batch(_).toSeq))
          val world = 1 + rnd.nextInt(7)
          val state = LoaderState.fromJson(plan.stateAfter(consumed).toJson()).withBudget(s.budget())
          val next = state.resume(mf, world)
          assert(next.worldSize() == world && rankSeqs(next).map(_.remainingBatches()).distinct.size == 1)
          val after = rankSeqs(next).flatMap(r => (r.firstBatch() until r.batches())
            .filter(r.paddedIn(_) == 0).flatMap(r.batch(_).toSeq))
          assert((before ++ after).sorted == all.sorted)
          if (world == plan.worldSize() && consumed.distinct.length == 1) {
            val c = consumed(0)
            for (r <- 0 until world) {
              assert(next.rank(r).indices(c, next.batchesPerRank()).toSeq ==
                plan.rank(r).indices(c, plan.batchesPerRank()).toSeq)
            }
          }
        }
      }
    }
  }

  test("an unbudgeted plan is the same plan, digest for digest, whatever the lengths") {
    val s = new PlanSpec(42, 0, 2, 3, Remainder.DROP_LAST, 4)
    assert(EpochPlan.create(m, s).rank(1).digest() ==
      "0df935fd81b986ffd570fdc20cd488c6b7f5593d4e6e4125d8df102236f3fc6c")
    assert(!LoaderState.initial(m, s).toJson().contains("batchTokens"))
  }

  test("bad budgets are refused by name") {
    val few = intercept[IllegalArgumentException] {
      EpochPlan.create(m, spec(42, 0, 40, 4, 20, Remainder.DROP_LAST, 8))
    }
    assert(few.getMessage.contains("12 batches") && few.getMessage.contains("40 ranks"))
    assert(few.getMessage.contains("spark.spindle.batchTokens"))
    val exact = intercept[IllegalArgumentException] {
      EpochPlan.create(m, spec(42, 0, 5, 4, 20, Remainder.EXACT, 8))
    }
    assert(exact.getMessage.contains("EXACT") && exact.getMessage.contains("2 left over"))
    val unattached = intercept[IllegalStateException] {
      EpochPlan.create(m, new PlanSpec(1, 0, 1, 4, Remainder.PAD, 8).withBudget(TokenBudget.of("t", 9)))
    }
    assert(unattached.getMessage.contains("field 't'"))
    val zero = intercept[IllegalArgumentException](TokenBudget.of("t", 0))
    assert(zero.getMessage.contains("spark.spindle.batchTokens"))
    val state = EpochPlan.create(m, spec(42, 0, 2, 4, 20, Remainder.DROP_LAST, 8)).stateAfter(Array(1, 1))
    val other = intercept[IllegalArgumentException](state.withBudget(budget(21)))
    assert(other.getMessage.contains("field 'tokens', 20 tokens") && other.getMessage.contains("21 tokens"))
    val none = intercept[IllegalArgumentException](state.requireBudget(null))
    assert(none.getMessage.contains("no token budget"))
    val ab = manifest(Seq(6, 0, 4, 6, 5, 4))
    val mix = Mixture.of(MixSpec.parse("a=0.7:x;b=0.3:y", "total"), ab.offsets(), Array(4, 2))
    val mixed = intercept[IllegalArgumentException] {
      EpochPlan.create(ab, new PlanSpec(1, 0, 1, 4, Remainder.PAD, 8).withBudget(budget(20)), mix)
    }
    assert(mixed.getMessage.contains("--mix"))
  }
}
