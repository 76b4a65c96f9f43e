package dev.spindle.spark.plan

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import Plans._

/** Weighted mixtures in the epoch plan (package documentation, "Mixtures"). */
class MixturePlanSuite extends AnyFunSuite {
  // Source a: 20 shards of 100 samples (indices 0..1999); source b: 10 shards of 150 (2000..3499).
  private val sizes = Seq.fill(20)(100L) ++ Seq.fill(10)(150L)
  private val m = manifest(sizes)

  private def mixture(entries: String, epoch: String = "total"): Mixture =
    Mixture.of(MixSpec.parse(entries, epoch), m.offsets(), Array(20, 10))

  private val seventyThirty = mixture("a=0.7:file:/a;b=0.3:file:/b")
  private val spec = new PlanSpec(42, 3, 4, 16, Remainder.DROP_LAST, 256)

  private def sourceCounts(indices: Iterable[Long]): Seq[Int] = {
    val counts = Array(0, 0)
    indices.foreach(i => counts(seventyThirty.sourceOf(m.offsets(), i)) += 1)
    counts.toSeq
  }

  private def saved(state: LoaderState) = LoaderState.fromJson(state.toJson())

  test("an epoch of a 70/30 mixture holds the proportions within 1%, and so does every batch") {
    val plan = EpochPlan.create(m, spec, seventyThirty)
    val all = rankSeqs(plan).flatMap(r => delivered(r).toSeq)
    val counts = sourceCounts(all)
    assert(all.size == 4 * 54 * 16) // 3,500 samples (the total) cut to whole rounds of 64
    assert(math.abs(counts(0).toDouble / all.size - 0.7) < 0.01, counts)
    // Each batch of 16 holds 11.2 of a's samples as closely as integers allow: 11 or 12.
    for (r <- rankSeqs(plan); b <- 0 until r.batches()) {
      val a = sourceCounts(r.batch(b).toSeq).head
      assert(a == 11 || a == 12, s"rank ${r.rank()} batch $b has $a of a's 16")
    }
  }

  test("a up-sampled: its samples repeat in a second pass of another order; b is down-sampled") {
    val seq = rankSeqs(EpochPlan.create(m, new PlanSpec(42, 3, 1, 1, Remainder.DROP_LAST, 256), seventyThirty))
      .head.indices(0, 3500).toSeq
    val a = seq.filter(_ < 2000)
    val b = seq.filter(_ >= 2000)
    assert(a.size == 2450 && b.size == 1050)
    assert(a.take(2000).sorted == (0L until 2000L)) // pass 0: every sample of a once
    assert(a.drop(2000).distinct.size == 450) // pass 1 continues with distinct samples
    assert(a.drop(2000) != a.take(450)) // in an order of its own
    assert(b.distinct.size == 1050) // b: the first 1,050 of its pass 0, none twice
  }

  test("the plan is deterministic, survives serialization, and depends on seed and mixture") {
    def digests(p: EpochPlan) = rankSeqs(p).map(_.digest())
    val plan = EpochPlan.create(m, spec, seventyThirty)
    assert(digests(plan) == digests(EpochPlan.create(m, spec, mixture("a=7:file:/a;b=3:file:/b"))))
    val bytes = new ByteArrayOutputStream()
    new ObjectOutputStream(bytes).writeObject(plan)
    val copy = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[EpochPlan]
    assert(digests(copy) == digests(plan))
    assert(copy.mixture() == seventyThirty)
    assert(digests(EpochPlan.create(m, new PlanSpec(43, 3, 4, 16, Remainder.DROP_LAST, 256), seventyThirty)) != digests(plan))
    assert(digests(EpochPlan.create(m, spec, mixture("a=0.6:file:/a;b=0.4:file:/b"))) != digests(plan))
    assert(digests(EpochPlan.create(m, spec)) != digests(plan))
  }

  test("epoch rules: total, samples:N, first-exhausted and all-exhausted") {
    assert(seventyThirty.samples() == 3500)
    assert(mixture("a=0.7:x;b=0.3:y", "samples:1000").samples() == 1000)
    // a runs out first: its 2,000 samples last 2,000 / 0.7 = 2,857 slots.
    assert(mixture("a=0.7:x;b=0.3:y", "first-exhausted").samples() == 2857)
    // b lasts longest: its last sample (1,499) is in slot 4,998 (b's 3rd slot of period 499).
    assert(mixture("a=0.7:x;b=0.3:y", "all-exhausted").samples() == 4999)
  }

  test("stopped mid-epoch at 2 ranks and resumed at 3, every remaining slot is delivered once") {
    val two = EpochPlan.create(m, spec.withWorldSize(2), seventyThirty)
    val before = rankSeqs(two).flatMap(r => r.indices(0, 40).toSeq)
    val state = saved(two.stateAfter(Array(40, 40)))
    assert(state.mixture() == seventyThirty)
    val three = state.resume(m, 3)
    val after = rankSeqs(three).flatMap(realDelivered)
    val whole = rankSeqs(two).flatMap(r => delivered(r).toSeq)
    assert((before ++ after).sorted == whole.sorted)
    assert(sourceCounts(before ++ after) == sourceCounts(whole))
    // The same world size again continues with the uninterrupted run's tail, bit for bit.
    val same = state.resume(m, 2)
    for (r <- 0 until 2) {
      assert(delivered(same.rank(r)).toSeq == two.rank(r).indices(40, two.batchesPerRank()).toSeq)
    }
  }

  test("the loader state records the mixture and a resume with another one is refused") {
    val state = EpochPlan.create(m, spec, seventyThirty).stateAfter(Array(1, 1, 1, 1))
    assert(state.toJson().contains("\"mix\""))
    assert(saved(state) == state)
    val other = mixture("a=0.6:x;b=0.4:y")
    val e = intercept[IllegalArgumentException](state.requireMixture(other))
    assert(e.getMessage.contains("a (weight 7, 20 shards)"))
    assert(e.getMessage.contains("a (weight 3, 20 shards)"))
    val single = intercept[IllegalArgumentException](state.requireMixture(null))
    assert(single.getMessage.contains("a single source"))
    assert(!EpochPlan.create(m, spec).stateAtStart().toJson().contains("\"mix\""))
  }

  test("a next epoch of a mixture is mixed too, in another order") {
    val plan = EpochPlan.create(m, spec, seventyThirty)
    val next = plan.stateAtEnd().resume(m, 4)
    assert(next.epoch() == 4 && next.mixture() == seventyThirty)
    assert(next.rank(0).digest() != plan.rank(0).digest())
  }

  test("random mixtures: the mixed sequence is what its definition says") {
    val rnd = new Random(5)
    for (_ <- 0 until 30) {
      val sa = Seq.fill(1 + rnd.nextInt(5))(rnd.nextInt(40).toLong + 1)
      val sb = Seq.fill(1 + rnd.nextInt(5))(rnd.nextInt(40).toLong)
      val mm = manifest(sa ++ sb)
      if (sb.sum > 0) {
        val wa = 1 + rnd.nextInt(9)
        val wb = 1 + rnd.nextInt(9)
        val mix = Mixture.of(MixSpec.parse(s"a=$wa:x;b=$wb:y", "total"), mm.offsets(), Array(sa.size, sb.size))
        val s = new PlanSpec(rnd.nextLong(), rnd.nextInt(9), 1, 1, Remainder.DROP_LAST, 1 + rnd.nextInt(50))
        val seq = EpochPlan.create(mm, s, mix).rank(0).indices(0, mix.samples().toInt).toSeq
        // Each source's slots, in order, are its own single-source passes laid end to end.
        for ((src, sizes, base) <- Seq((0, sa, 0L), (1, sb, sa.sum))) {
          val own = seq.filter(i => mix.sourceOf(mm.offsets(), i) == src).map(_ - base)
          val single = manifest(sizes)
          val passes = Iterator.from(0).flatMap { j =>
            val seed = MixedSources.sourceSeed(s.seed(), s.epoch(), src, j)
            EpochPlan.create(single, new PlanSpec(seed, s.epoch(), 1, 1, Remainder.DROP_LAST, s.shuffleWindow()))
              .rank(0).indices(0, sizes.sum.toInt).toSeq
          }
          assert(own == passes.take(own.size).toSeq)
        }
        // Any stretch derived on its own equals the same stretch of the whole.
        val from = rnd.nextInt(seq.size)
        val to = from + rnd.nextInt(seq.size - from + 1)
        val part = new Array[Long](to - from)
        new EpochSequence(mm.offsets(), s.seed(), s.epoch(), s.shuffleWindow(), mix).copy(from, to, part, 0)
        assert(part.toSeq == seq.slice(from, to))
      }
    }
  }

  test("bad mixture entries are refused, naming the entry") {
    def refused(entries: String, epoch: String = "total") =
      intercept[IllegalArgumentException](MixSpec.parse(entries, epoch)).getMessage
    assert(refused("a=0.7:x;b0.3:y") ==
      "Invalid mixture entry \"b0.3:y\": must be NAME=PROPORTION:URI, e.g. web=0.7:/data/web")
    assert(refused("a=0.7:x;b=-1:y").contains("\"b=-1:y\": the proportion -1 must be > 0"))
    assert(refused("a=0.7:x;b=0:y").contains("the proportion 0 must be > 0"))
    assert(refused("a=0.7:x;b=lots:y").contains("the proportion \"lots\" is not a number"))
    assert(refused("a=0.7:x;b=0.3:").contains("must be NAME=PROPORTION:URI"))
    assert(refused("a=0.7:x;a=0.3:y").contains("the name \"a\" is used by more than one source"))
    assert(refused("a b=1:x").contains("the name \"a b\" must be letters"))
    assert(refused("a=1:x", "sometimes").contains("Invalid mixture epoch \"sometimes\""))
    assert(refused("a=1:x", "samples:0").contains("samples:N with N >= 1"))
    assert(refused("a=0.0000001:x").contains("more than 6 decimal places"))
    assert(refused("a=999999:x;b=2:y").contains("integer weights summing to 1000001"))
    val empty = intercept[IllegalArgumentException](
      Mixture.of(MixSpec.parse("a=1:file:/a;b=1:file:/b", "total"), manifest(Seq(5, 0)).offsets(), Array(1, 1)))
    assert(empty.getMessage == "Refused mixture: source \"b\" (file:/b) has no samples")
  }

  test("proportions are normalised to the smallest integer weights") {
    assert(MixSpec.parse("a=0.7:x;b=0.3:y", null).weights().toSeq == Seq(7, 3))
    assert(MixSpec.parse("a=70:x;b=30:y", null).weights().toSeq == Seq(7, 3))
    assert(MixSpec.parse("a=0.25:x;b=1.5:y;c=2:z", null).weights().toSeq == Seq(1, 6, 8))
    assert(MixSpec.parse("a=0.25:x;b=0.75:y", null).proportions().toSeq == Seq(0.25, 0.75))
    assert(MixSpec.parse("a=0.7:s3a://bucket/x:y", null).uris().get(0) == "s3a://bucket/x:y")
  }
}
