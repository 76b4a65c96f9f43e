package dev.spindle.spark.image;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The lanes both passes of {@link VectorResample} compute in: 8 ints (256-bit) per vector, one per
 * row or column, holding {@link PillowResample}'s fixed-point sums; bytes widened to them and sums
 * narrowed back to the bytes Pillow stores.
 *
 * <p>Stateless; any thread. Loaded only on the vector path (it names vector types).
 */
final class VectorLanes {
  static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;
  static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
  static final int LANES = 8;
  static final int SHIFT = PillowResample.PRECISION_BITS;
  static final int HALF = 1 << (SHIFT - 1);

  private VectorLanes() {}

  /** A fixed-point sum as the byte Pillow stores: shifted down, clipped to 0..255. */
  static ByteVector narrow(IntVector sum) {
    return (ByteVector)
        sum.lanewise(VectorOperators.ASHR, SHIFT)
            .max(0)
            .min(255)
            .convertShape(VectorOperators.I2B, BYTES, 0);
  }

  /** 8 signed bytes at {@code a[at]} as ints. */
  static IntVector widen(byte[] a, int at) {
    return (IntVector)
        ByteVector.fromArray(BYTES, a, at).convertShape(VectorOperators.B2I, INTS, 0);
  }

  /**
   * {@code HALF + 128 * sum(k[kb .. kb + n))}: what the passes' sums start from, as its taps are
   * stored {@code v - 128} (and {@code sum(v * k) = sum((v - 128) * k) + 128 * sum(k)}, exactly).
   */
  static int bias(int[] k, int kb, int n) {
    int bias = HALF;
    for (int t = 0; t < n; t++) {
      bias += 128 * k[kb + t];
    }
    return bias;
  }
}
