package dev.spindle.spark.image;

/** IEEE 754 binary16 conversion (Java 17 has no {@code Float.floatToFloat16}). */
final class Half {
  private Half() {}

  /** Rounds {@code f} to the nearest half-precision value, ties to even, as numpy and torch do. */
  static short fromFloat(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int exp = (bits >>> 23) & 0xFF;
    int mant = bits & 0x7FFFFF;
    if (exp == 0xFF) {
      return (short) (sign | 0x7C00 | (mant != 0 ? 0x200 : 0));
    }
    int e = exp - 127 + 15;
    if (e >= 0x1F) {
      return (short) (sign | 0x7C00);
    }
    if (e <= 0) {
      if (e < -10) {
        return (short) sign;
      }
      return (short) (sign | roundShift(mant | 0x800000, 14 - e));
    }
    return (short) (sign | ((e << 10) + roundShift(mant, 13)));
  }

  private static int roundShift(int value, int shift) {
    int kept = value >> shift;
    int rest = value & ((1 << shift) - 1);
    int half = 1 << (shift - 1);
    return (rest > half || (rest == half && (kept & 1) != 0)) ? kept + 1 : kept;
  }
}
