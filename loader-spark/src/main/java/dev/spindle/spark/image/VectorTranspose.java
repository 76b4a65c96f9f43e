package dev.spindle.spark.image;

import static dev.spindle.spark.image.VectorLanes.INTS;
import static dev.spindle.spark.image.VectorLanes.LANES;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The byte transposes of {@link VectorHorizontalPass}: 8 source rows gathered a word at a time and
 * interleaved byte by byte (a gather and one byte permutation per word), and 8x8 tiles of bytes
 * turned from columns into rows, with one 512-bit byte permutation where the CPU has one ({@link
 * VectorPath#PERMUTE}), else with shifts and masks on longs.
 *
 * <p>Stateless; any thread; the arrays are the caller's (from its {@link DecodeScratch}). Loaded
 * only on the vector path (it names vector types).
 */
final class VectorTranspose {
  /** 8 bytes of a byte array as one little-endian long. */
  static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** Flips the top bit of 8 bytes: {@code v ^ 0x80} is {@code v - 128} as a signed byte. */
  static final long SIGNS = 0x8080808080808080L;

  /** 8 rows of 8 bytes, for {@link VectorPath#PERMUTE}'s transposes. */
  private static final VectorSpecies<Byte> TILE = ByteVector.SPECIES_512;

  static final int TILE_BYTES = LANES * LANES;

  /** Byte {@code r * 8 + j} of a tile to {@code j * 8 + r}. */
  private static final VectorShuffle<Byte> TRANSPOSE =
      VectorShuffle.fromOp(TILE, i -> i % LANES * LANES + i / LANES);

  /** One 8-byte word of each of 8 rows, gathered for {@link #TRANSPOSE}. */
  private static final VectorSpecies<Long> WORDS = LongVector.SPECIES_512;

  /** Byte {@code r * 4 + j} of 8 rows of 4 bytes to {@code j * 8 + r}. */
  private static final VectorShuffle<Byte> TRANSPOSE_WORDS =
      VectorShuffle.fromOp(ByteVector.SPECIES_256, i -> i % LANES * 4 + i / LANES);

  private VectorTranspose() {}

  /**
   * {@code count} 8-byte words of 8 rows, from {@code words[base]} (rows {@code map} apart), into
   * {@code wide} byte by byte with the rows interleaved, as {@code v ^ 0x80}: a 512-bit gather and
   * a byte permutation per word.
   */
  static void transposeRows(long[] words, int base, int[] map, int count, byte[] wide) {
    for (int i = 0, q = 0; i < count; i++, q += TILE_BYTES) {
      LongVector.fromArray(WORDS, words, base + i, map, 0)
          .reinterpretAsBytes()
          .rearrange(TRANSPOSE)
          .lanewise(VectorOperators.XOR, (byte) 0x80)
          .intoByteArray(wide, q, ByteOrder.LITTLE_ENDIAN);
    }
  }

  /** {@link #transposeRows(long[], int, int[], int, byte[])} for 4-byte words, 256 bits wide. */
  static void transposeRows(int[] words, int base, int[] map, int count, byte[] wide) {
    for (int i = 0, q = 0; i < count; i++, q += 4 * LANES) {
      IntVector.fromArray(INTS, words, base + i, map, 0)
          .reinterpretAsBytes()
          .rearrange(TRANSPOSE_WORDS)
          .lanewise(VectorOperators.XOR, (byte) 0x80)
          .intoByteArray(wide, q, ByteOrder.LITTLE_ENDIAN);
    }
  }

  /**
   * The {@code tiles} 8x8 tiles of {@code block} (64 bytes each, column-major) transposed into
   * {@code planar} from {@code at}, one every {@code stride} bytes, as {@code v ^ 0x80}: one byte
   * permutation each (AVX-512 VBMI's {@code vpermb}).
   */
  static void transposeTiles(byte[] block, int tiles, byte[] planar, int at, int stride) {
    for (int tile = 0, u = 0, to = at; tile < tiles; tile++, u += TILE_BYTES, to += stride) {
      ByteVector.fromByteArray(TILE, block, u, ByteOrder.LITTLE_ENDIAN)
          .rearrange(TRANSPOSE)
          .lanewise(VectorOperators.XOR, (byte) 0x80)
          .intoByteArray(planar, to, ByteOrder.LITTLE_ENDIAN);
    }
  }

  /**
   * Transposes the 8x8 bytes in {@code m} (long {@code i} is row {@code i}, byte {@code j} of it
   * column {@code j}) and stores row {@code j} of the result (column {@code j} of the input) at
   * {@code out[at + j * stride]}, 8 bytes each.
   */
  static void transpose(long[] m, byte[] out, int at, int stride) {
    long x0 = m[0];
    long x1 = m[1];
    long x2 = m[2];
    long x3 = m[3];
    long x4 = m[4];
    long x5 = m[5];
    long x6 = m[6];
    long x7 = m[7];
    long t;
    // swap the 4x4 blocks off the diagonal, then the 2x2 blocks, then single bytes
    t = ((x0 >>> 32) ^ x4) & 0x00000000FFFFFFFFL;
    x4 ^= t;
    x0 ^= t << 32;
    t = ((x1 >>> 32) ^ x5) & 0x00000000FFFFFFFFL;
    x5 ^= t;
    x1 ^= t << 32;
    t = ((x2 >>> 32) ^ x6) & 0x00000000FFFFFFFFL;
    x6 ^= t;
    x2 ^= t << 32;
    t = ((x3 >>> 32) ^ x7) & 0x00000000FFFFFFFFL;
    x7 ^= t;
    x3 ^= t << 32;
    t = ((x0 >>> 16) ^ x2) & 0x0000FFFF0000FFFFL;
    x2 ^= t;
    x0 ^= t << 16;
    t = ((x1 >>> 16) ^ x3) & 0x0000FFFF0000FFFFL;
    x3 ^= t;
    x1 ^= t << 16;
    t = ((x4 >>> 16) ^ x6) & 0x0000FFFF0000FFFFL;
    x6 ^= t;
    x4 ^= t << 16;
    t = ((x5 >>> 16) ^ x7) & 0x0000FFFF0000FFFFL;
    x7 ^= t;
    x5 ^= t << 16;
    t = ((x0 >>> 8) ^ x1) & 0x00FF00FF00FF00FFL;
    x1 ^= t;
    x0 ^= t << 8;
    t = ((x2 >>> 8) ^ x3) & 0x00FF00FF00FF00FFL;
    x3 ^= t;
    x2 ^= t << 8;
    t = ((x4 >>> 8) ^ x5) & 0x00FF00FF00FF00FFL;
    x5 ^= t;
    x4 ^= t << 8;
    t = ((x6 >>> 8) ^ x7) & 0x00FF00FF00FF00FFL;
    x7 ^= t;
    x6 ^= t << 8;
    LONGS.set(out, at, x0);
    LONGS.set(out, at + stride, x1);
    LONGS.set(out, at + 2 * stride, x2);
    LONGS.set(out, at + 3 * stride, x3);
    LONGS.set(out, at + 4 * stride, x4);
    LONGS.set(out, at + 5 * stride, x5);
    LONGS.set(out, at + 6 * stride, x6);
    LONGS.set(out, at + 7 * stride, x7);
  }
}
