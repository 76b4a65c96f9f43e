package dev.spindle.spark.plan

import org.scalatest.funsuite.AnyFunSuite

import Plans._

/**
 * Cross-implementation vectors: the expected values below were printed by reference_plan.py (next
 * to this file), a Python reimplementation written from package-info.java alone. They pin the
 * algorithm: any change to the order of a plan on any JVM fails here.
 */
class ReferenceVectorsSuite extends AnyFunSuite {
  private val m = manifest(Seq(5, 0, 7, 3, 9, 4))

  private def ranks(spec: PlanSpec) = rankSeqs(EpochPlan.create(m, spec))

  test("SplitMix64 produces the published reference outputs") {
    // The first outputs of SplitMix64 from state 1234567, as in Vigna's splitmix64.c.
    val s = SplitMix64.fromState(1234567L)
    val expected = Seq(BigInt("6457827717110365317"), BigInt("3203168211198807973"),
      BigInt("9817491932198370423"), BigInt("4593380528125082431"), BigInt("16408922859458223821"))
    assert(Seq.fill(5)(BigInt(java.lang.Long.toUnsignedString(s.next()))) == expected)
  }

  test("DROP_LAST plans match the reference for two epochs") {
    val e0 = ranks(new PlanSpec(42, 0, 2, 3, Remainder.DROP_LAST, 4))
    assert(delivered(e0(0)).toSeq == Seq(17, 15, 18, 16, 20, 21, 22, 19, 23, 0, 1, 2))
    assert(delivered(e0(1)).toSeq == Seq(3, 6, 4, 5, 7, 10, 8, 9, 25, 24, 26, 11))
    assert(e0(0).digest() == "38397b45bc63c8ad62a0d71dd37bc19a3d893fd71412408312276f5edb19895b")
    assert(e0(1).digest() == "0df935fd81b986ffd570fdc20cd488c6b7f5593d4e6e4125d8df102236f3fc6c")
    val e1 = ranks(new PlanSpec(42, 1, 2, 3, Remainder.DROP_LAST, 4))
    assert(delivered(e1(0)).toSeq == Seq(14, 12, 0, 13, 1, 3, 2, 4, 7, 8, 6, 5))
    assert(delivered(e1(1)).toSeq == Seq(9, 11, 10, 24, 26, 25, 27, 15, 17, 19, 16, 18))
  }

  test("a PAD plan with a negative seed matches the reference, padding included") {
    val p = ranks(new PlanSpec(-1, 3, 3, 2, Remainder.PAD, 5))
    assert(delivered(p(0)).toSeq == Seq(0, 27, 25, 26, 24, 3, 2, 1, 4, 15))
    assert(delivered(p(1)).toSeq == Seq(16, 18, 17, 20, 19, 12, 21, 13, 22, 16))
    assert(delivered(p(2)).toSeq == Seq(23, 8, 14, 6, 7, 5, 9, 11, 10, 23))
    assert(p.map(_.realSamples()) == Seq(10, 9, 9))
    assert(p(2).digest() == "d1131ec9a10b9a3dcc569ad5d455913cb58b1baa2fb31e6dc5f51f89b7fdc9ab")
  }

  test("an EXACT plan with a window larger than the epoch matches the reference") {
    val p = ranks(new PlanSpec(7, 2, 2, 7, Remainder.EXACT, 1000))
    assert(delivered(p(0)).toSeq == Seq(18, 24, 2, 22, 17, 0, 4, 15, 16, 6, 9, 12, 14, 3))
    assert(delivered(p(1)).toSeq == Seq(23, 10, 26, 5, 7, 13, 21, 27, 20, 19, 25, 11, 1, 8))
  }

  test("a 2 -> 3 resume matches the reference") {
    val plan = EpochPlan.create(m, new PlanSpec(42, 0, 2, 3, Remainder.DROP_LAST, 4))
    val r = rankSeqs(plan.stateAfter(Array(1, 2)).resume(m, 3))
    assert(delivered(r(0)).toSeq == Seq(16, 20, 21, 22, 19, 16))
    assert(delivered(r(1)).toSeq == Seq(23, 0, 1, 2, 8, 23))
    assert(delivered(r(2)).toSeq == Seq(9, 25, 24, 26, 11, 9))
    assert(r.map(_.realSamples()) == Seq(5, 5, 5))
    assert(r(1).digest() == "e926f2f059b9a48aed3818f01829a28cb9fc3a0a5203076f9fa4c965ac535434")
  }

  // Mixtures: sources A (shards 6, 0, 4, 6) and B (shards 5, 4) laid end to end.
  private val ab = manifest(Seq(6, 0, 4, 6, 5, 4))

  private def mixed(props: String, epoch: String, spec: PlanSpec): EpochPlan = {
    val mix = Mixture.of(MixSpec.parse(props, epoch), ab.offsets(), Array(4, 2))
    EpochPlan.create(ab, spec, mix)
  }

  test("a mixture's slot pattern matches the reference") {
    def pattern(props: String) = {
      val m = Mixture.of(MixSpec.parse(props, "total"), ab.offsets(), Array(4, 2))
      (0 until m.period().toInt).map(m.sourceAt(_))
    }
    assert(pattern("a=0.7:x;b=0.3:y") == Seq(0, 1, 0, 0, 0, 1, 0, 0, 1, 0))
    val three = Mixture.of(MixSpec.parse("a=2:x;b=1:y;c=1:z", "total"), manifest(Seq(1, 1, 1)).offsets(),
      Array(1, 1, 1))
    assert((0 until 4).map(three.sourceAt(_)) == Seq(0, 1, 2, 0))
  }

  test("a 70/30 mixture (A up-sampled) matches the reference") {
    val p = rankSeqs(mixed("a=0.7:x;b=0.3:y", "total", new PlanSpec(42, 0, 2, 3, Remainder.DROP_LAST, 4)))
    assert(delivered(p(0)).toSeq == Seq(7, 21, 6, 9, 8, 24, 13, 12, 22, 11, 10, 23))
    assert(delivered(p(1)).toSeq == Seq(15, 14, 0, 18, 1, 4, 19, 5, 2, 16, 3, 1))
    assert(p(1).digest() == "9c6b00b7418df3c883481e3625d5ad3e253ed34ae2a01808e02a5548f12b033f")
  }

  test("a 1:3 mixture of samples:30 under PAD matches the reference, B up-sampled") {
    val p = rankSeqs(mixed("a=1:x;b=3:y", "samples:30", new PlanSpec(-5, 1, 2, 4, Remainder.PAD, 3)))
    assert(delivered(p(0)).toSeq == Seq(16, 6, 17, 18, 20, 8, 19, 21, 22, 7, 23, 24, 22, 9, 23, 16))
    assert(delivered(p(1)).toSeq == Seq(21, 24, 10, 16, 17, 18, 11, 20, 19, 17, 13, 18, 16, 19, 12, 21))
    assert(p.map(_.realSamples()) == Seq(15, 15))
    assert(p(0).digest() == "c267487664ec6d06e7cda041069fdbcdaa280a572980f57694a8e49d43c33e1a")
  }

  test("first-exhausted and all-exhausted epochs match the reference") {
    val spec = new PlanSpec(9, 0, 1, 2, Remainder.DROP_LAST, 100)
    val first = rankSeqs(mixed("a=0.5:x;b=0.5:y", "first-exhausted", spec))
    assert(first.head.samples() == 18)
    assert(delivered(first.head).toSeq ==
      Seq(3, 24, 9, 23, 0, 20, 7, 19, 8, 21, 14, 18, 5, 17, 11, 16, 6, 22))
    val all = mixed("a=0.5:x;b=0.5:y", "all-exhausted", spec)
    assert(all.rank(0).digest() == "a50563d6d2c75f4ba247f0ea2e34aab8a5abc05645e4573e73ab8a696fd18ec1")
    assert(all.mixture().samples() == 31)
  }

  test("a mixture's 2 -> 3 resume matches the reference") {
    val plan = mixed("a=0.7:x;b=0.3:y", "total", new PlanSpec(42, 0, 2, 3, Remainder.DROP_LAST, 4))
    val r = rankSeqs(plan.stateAfter(Array(2, 1)).resume(ab, 3))
    assert(delivered(r(0)).toSeq == Seq(13, 12, 22, 11, 10, 13))
    assert(delivered(r(1)).toSeq == Seq(23, 18, 1, 4, 19, 23))
    assert(delivered(r(2)).toSeq == Seq(5, 2, 16, 3, 1, 5))
    assert(r(2).digest() == "e3388971b6edde98ed9e454d88b2515ed8a0a721ecf54226178cdf8118dded69")
  }
}
