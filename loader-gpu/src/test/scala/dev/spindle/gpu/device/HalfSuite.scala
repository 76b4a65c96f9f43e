package dev.spindle.gpu.device

import java.util.stream.IntStream

import org.apache.arrow.memory.util.Float16
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

  // Half stays beside Arrow's Float16 because the two differ, on NaN payloads only (Half's Javadoc)

  /** Floats with high bits {@code high} that Half and Float16 convert differently, NaNs aside. */
  private def differences(high: Int): Long = {
    var n = 0L
    var low = 0
    while (low < 0x10000) {
      val bits = (high << 16) | low
      val f = java.lang.Float.intBitsToFloat(bits)
      val (a, b) = (Half.fromFloat(f) & 0xffff, Float16.toFloat16(f) & 0xffff)
      val nan = (bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff) != 0
      val same = if (!nan) a == b else {
        // both a NaN of the float's sign; Float16 drops the payload (0x7e00), Half keeps its top
        // 9 bits (0x7e00 | mant >>> 13)
        val quiet = (bits >>> 16) & 0x8000 | 0x7e00
        b == quiet && a == (quiet | ((bits & 0x7fffff) >>> 13))
      }
      if (!same) n += 1
      low += 1
    }
    n
  }

  test("float to half equals Arrow's Float16 on all 2^32 floats but NaN payloads") {
    val differ = IntStream.range(0, 0x10000).parallel().mapToLong(h => differences(h)).sum()
    assert(differ == 0L, s"$differ floats convert differently")
  }

  test("half to float equals Arrow's Float16 on all 65,536 halves but signalling NaNs") {
    for (h <- 0 until 0x10000) {
      val a = java.lang.Float.floatToRawIntBits(Half.toFloat(h.toShort))
      val b = java.lang.Float.floatToRawIntBits(Float16.toFloat(h.toShort))
      val signalling = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0 && (h & 0x200) == 0
      // Float16 quiets a signalling NaN (sets the quiet bit); Half keeps it as it is
      assert(if (signalling) b == (a | 0x400000) && a != b else a == b, f"0x$h%04x")
    }
  }
}
