package dev.spindle.gpu.device;

/**
 * IEEE 754 binary16 conversion with round-to-nearest-even, the rounding of CUDA's {@code
 * __float2half_rn} (Java 17 has no {@code Float.floatToFloat16}). Stateless; any thread.
 *
 * <p>Arrow's {@code org.apache.arrow.memory.util.Float16} (Arrow 19) converts every float and every
 * half to the same bits except NaNs (HalfSuite compares all 2^32 floats and all 65,536 halves):
 * {@link #fromFloat} keeps the top 9 bits of a NaN's payload ({@code 0x7e00 | mantissa >>> 13} with
 * its sign) where Float16 gives the one quiet NaN {@code 0x7e00}; {@link #toFloat} keeps a
 * signalling NaN as it is where Float16 quiets it (sets bit 22). So this class stays beside it.
 */
public final class Half {
  private Half() {}

  /** Rounds {@code f} to the nearest half (ties to even); NaN stays NaN, overflow is infinity. */
  public static short fromFloat(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int exp = (bits >>> 23) & 0xff;
    int mant = bits & 0x7fffff;
    if (exp == 0xff) {
      return (short) (sign | 0x7c00 | (mant != 0 ? 0x200 | (mant >>> 13) : 0));
    }
    int e = exp - 127 + 15;
    if (e >= 0x1f) {
      return (short) (sign | 0x7c00);
    }
    if (e <= 0) {
      return (short) (sign | subnormal(mant, e, exp));
    }
    int half = (e << 10) | (mant >>> 13);
    int rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1) != 0)) {
      half++; // may carry into the exponent, up to infinity: still correct
    }
    return (short) (sign | half);
  }

  private static int subnormal(int mant, int e, int exp) {
    if (exp == 0 || e < -10) {
      return 0; // float subnormals and anything below half of the smallest half subnormal
    }
    int full = mant | 0x800000; // 24 significant bits
    int shift = 14 - e; // 14..24
    int half = full >>> shift;
    int rest = full & ((1 << shift) - 1);
    int mid = 1 << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1) != 0)) {
      half++;
    }
    return half;
  }

  /** Widens a half to the float it represents exactly. */
  public static float toFloat(short h) {
    int sign = (h & 0x8000) << 16;
    int exp = (h >>> 10) & 0x1f;
    int mant = h & 0x3ff;
    if (exp == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
    }
    if (exp == 0) {
      float v = mant * 0x1p-24f;
      return sign != 0 ? -v : v;
    }
    return Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
  }
}
