package dev.spindle.gpu.device

import org.scalatest.funsuite.AnyFunSuite

/** float → half rounding must equal CUDA's __float2half_rn (round to nearest, ties to even). */
class HalfSuite extends AnyFunSuite {

  def h(f: Float): Int = Half.fromFloat(f) & 0xffff

  test("known values convert exactly") {
    assert(h(0f) == 0x0000)
    assert(h(-0f) == 0x8000)
    assert(h(1f) == 0x3c00)
    assert(h(-2f) == 0xc000)
    assert(h(65504f) == 0x7bff)
    assert(h(65520f) == 0x7c00, "halfway above the largest half rounds to infinity")
    assert(h(Float.PositiveInfinity) == 0x7c00)
    assert(h(Float.NegativeInfinity) == 0xfc00)
    assert(h(math.pow(2, -24).toFloat) == 0x0001, "smallest subnormal")
    assert(h(math.pow(2, -25).toFloat) == 0x0000, "half of it ties to even zero")
    assert(h(3 * math.pow(2, -25).toFloat) == 0x0002, "1.5 ulp ties to even 2")
    assert(h(math.pow(2, -14).toFloat) == 0x0400, "smallest normal")
    assert(h(1e-10f) == 0)
    assert(h(Float.NaN) >= 0x7c01 && h(Float.NaN) <= 0x7fff)
  }

  test("every finite half survives a round trip through float") {
    for (bits <- 0 until 0x10000 if (bits & 0x7c00) != 0x7c00) {
      val f = Half.toFloat(bits.toShort)
      assert(h(f) == bits || (f == 0f && (bits & 0x7fff) == 0), f"0x$bits%04x")
    }
  }

  test("midpoints between neighbouring halves round to the even one, others to the nearest") {
    for (bits <- 0 until 0x7bff) {
      val lo = Half.toFloat(bits.toShort)
      val hi = Half.toFloat((bits + 1).toShort)
      val mid = ((lo.toDouble + hi.toDouble) / 2).toFloat // exact: halves have 11 bits
      val even = if ((bits & 1) == 0) bits else bits + 1
      assert(h(mid) == even, f"midpoint above 0x$bits%04x")
      assert(h(Math.nextDown(mid)) == bits, f"just below midpoint above 0x$bits%04x")
      assert(h(Math.nextUp(mid)) == bits + 1, f"just above midpoint above 0x$bits%04x")
    }
  }
}
