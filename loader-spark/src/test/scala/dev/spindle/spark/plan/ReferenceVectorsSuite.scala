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
}
