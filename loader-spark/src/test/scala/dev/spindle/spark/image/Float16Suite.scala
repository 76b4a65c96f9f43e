package dev.spindle.spark.image

import java.util.stream.IntStream

import org.apache.arrow.memory.util.Float16
import org.scalatest.funsuite.AnyFunSuite

/**
 * float16-chw output converts with Arrow's Float16 since it replaced Spindle's own Half (issue 23):
 * this proves, for every one of the 2^32 float bit patterns, that Arrow 19's Float16.toFloat16
 * gives the bits Half gave (round to nearest, ties to even, as numpy and torch; NaN to the quiet
 * NaN 0x7e00 with its sign; float subnormals to signed zero), so no float16 output changed.
 */
class Float16Suite extends AnyFunSuite {

  /** The conversion of the former dev.spindle.spark.image.Half, as it was. */
  private def formerHalf(f: Float): Short = {
    val bits = java.lang.Float.floatToRawIntBits(f)
    val sign = (bits >>> 16) & 0x8000
    val exp = (bits >>> 23) & 0xFF
    val mant = bits & 0x7FFFFF
    if (exp == 0xFF) return (sign | 0x7C00 | (if (mant != 0) 0x200 else 0)).toShort
    val e = exp - 127 + 15
    if (e >= 0x1F) return (sign | 0x7C00).toShort
    if (e <= 0) {
      if (e < -10) return sign.toShort
      return (sign | roundShift(mant | 0x800000, 14 - e)).toShort
    }
    (sign | ((e << 10) + roundShift(mant, 13))).toShort
  }

  private def roundShift(value: Int, shift: Int): Int = {
    val kept = value >> shift
    val rest = value & ((1 << shift) - 1)
    val half = 1 << (shift - 1)
    if (rest > half || (rest == half && (kept & 1) != 0)) kept + 1 else kept
  }

  /** How many of the 65,536 floats whose high 16 bits are {@code high} convert differently. */
  private def differences(high: Int): Long = {
    var n = 0L
    var low = 0
    while (low < 0x10000) {
      val f = java.lang.Float.intBitsToFloat((high << 16) | low)
      if (Float16.toFloat16(f) != formerHalf(f)) n += 1
      low += 1
    }
    n
  }

  test("Arrow's Float16.toFloat16 equals the former Half on all 2^32 floats") {
    val start = System.nanoTime()
    val differ = IntStream.range(0, 0x10000).parallel().mapToLong(h => differences(h)).sum()
    if (differ != 0) {
      val first = IntStream.range(0, 0x10000).filter(h => differences(h) > 0).findFirst()
      fail(f"$differ floats convert differently, the first with high bits 0x${first.getAsInt}%04x")
    }
    info(f"4,294,967,296 floats compared in ${(System.nanoTime() - start) / 1e9}%.1f s")
  }
}
