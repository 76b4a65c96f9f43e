package dev.spindle.spark.image;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The last {@link Stage} of a transform (no padding) with {@link PillowResample}'s exact integer
 * arithmetic, eight values at a time with the JDK Vector API ({@code jdk.incubator.vector},
 * 256-bit), written straight into the destination in its {@link OutputMode}.
 *
 * <p>Same sums as the scalar passes, in the same order of passes, so the same bytes: each output
 * value is {@code HALF + sum(input * coefficient)} over its own taps, clipped to 0..255 after each
 * pass; only the lanes differ.
 * <ul>
 *   <li>Horizontal pass, 8 source rows at a time: the rows' bytes are transposed (8x8 blocks of
 *       bytes in longs) and widened, so that one vector holds one (column, channel) of 8 rows;
 *       every output column is then a few multiply-adds of such vectors by a broadcast
 *       coefficient. The results (bytes) are transposed back, tile by tile, into {@code planar}:
 *       8x8 tiles of bytes in long rows, per channel {@code c} and group {@code g} of 8
 *       columns, row {@code r} (relative to the first row read) of columns {@code 8g .. 8g + 7}
 *       at {@code ((c * groups + g) * paddedRows + r) * 8}. A tile's transpose is one 512-bit
 *       byte permutation where the CPU has one ({@link VectorPath#PERMUTE}), else shifts and
 *       masks on longs.
 *   <li>Vertical pass, 8 output columns at a time from {@code planar}, where an output's taps
 *       are consecutive 8-byte rows of one column group, fused with the output
 *       conversion: float32 CHW is {@code (v / 255f - mean) / std} in float32 vector arithmetic
 *       (the same IEEE results as torch's and {@link OutputWriter}'s; each division is a
 *       multiplication with an FMA correction where {@link OutputWriter#divisionFree} has checked
 *       that this gives the same bits for all 256 values), stored straight into the Arrow
 *       buffer; other modes go through {@link OutputWriter#writeRow}.
 * </ul>
 *
 * <p>Used only when the module is present and the CPU has 256-bit vectors ({@link VectorPath});
 * otherwise {@link StageRunner} and {@link OutputWriter#write} run the same arithmetic in scalar
 * Java. Stateless; buffers come from the calling thread's {@link DecodeScratch}.
 */
final class VectorResample {
  private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_256;
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_64;
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final int LANES = 8;
  private static final int SHIFT = PillowResample.PRECISION_BITS;
  private static final int HALF = 1 << (SHIFT - 1);
  /** Flips the top bit of 8 bytes: {@code v ^ 0x80} is {@code v - 128} as a signed byte. */
  private static final long SIGNS = 0x8080808080808080L;
  private static final FloatVector INVERSE_255 = FloatVector.broadcast(FLOATS, 1f / 255f);
  private static final FloatVector MINUS_255 = FloatVector.broadcast(FLOATS, -255f);

  /** 8 rows of 8 bytes, for {@link VectorPath#PERMUTE}'s transposes. */
  private static final VectorSpecies<Byte> TILE = ByteVector.SPECIES_512;
  private static final int TILE_BYTES = LANES * LANES;
  /** Byte {@code r * 8 + j} of a tile to {@code j * 8 + r}. */
  private static final VectorShuffle<Byte> TRANSPOSE =
      VectorShuffle.fromOp(TILE, i -> i % LANES * LANES + i / LANES);

  private VectorResample() {}

  /**
   * Runs {@code stage} (which must not pad) on {@code source} and writes its window, {@code
   * window.width() x window.height()}, through {@code writer} at {@code dst[dstOffset]}.
   */
  static void run(Stage stage, DecodedImage source, int reduce, OutputWriter writer, ArrowBuf dst,
      long dstOffset, boolean permute, DecodeScratch scratch) {
    run(stage, ByteBuffer.wrap(source.pixels()), source.width(), source.height(), reduce, writer,
        dst, dstOffset, permute, scratch);
  }

  /**
   * {@link #run} on an image of {@code width x height} RGB bytes in {@code rgb} (from its
   * position 0; for example the decoder's native buffer, read only where the stage needs it).
   */
  static void run(Stage stage, ByteBuffer rgb, int width, int height, int reduce,
      OutputWriter writer, ArrowBuf dst, long dstOffset, boolean permute, DecodeScratch scratch) {
    Stage.Rect win = stage.window();
    ByteBuffer floats = writer.mode() != OutputMode.FLOAT32_CHW ? null
        : dst.nioBuffer(dstOffset, win.width() * win.height() * 3 * 4)
            .order(ByteOrder.LITTLE_ENDIAN);
    run(stage, rgb, width, height, reduce, writer, floats, dst, dstOffset, permute, scratch);
  }

  /** {@link #run}; float32 output goes to {@code floats} (from 0), other modes to {@code dst}. */
  private static void run(Stage stage, ByteBuffer rgb, int srcWidth, int srcHeight, int reduce,
      OutputWriter writer, ByteBuffer floats, ArrowBuf dst, long dstOffset, boolean permute,
      DecodeScratch scratch) {
    Stage.Rect win = stage.window();
    int w = win.width();
    int h = win.height();
    PillowResample.Kernel kx =
        StageRunner.kernel(stage, reduce, srcWidth, true, win.x(), w, scratch);
    PillowResample.Kernel ky =
        StageRunner.kernel(stage, reduce, srcHeight, false, win.y(), h, scratch);
    int y0 = ky.firstInput();
    int rows = ky.endInput() - y0;
    int width = (w + LANES - 1) / LANES * LANES;
    int paddedRows = (rows + LANES - 1) / LANES * LANES;
    byte[] planar = scratch.bytes(DecodeScratch.Slot.PLANAR, 3 * paddedRows * width);
    horizontal(rgb, srcWidth, y0, rows, kx, stage.flip(), width, paddedRows, planar, permute,
        scratch);
    vertical(planar, y0, width, paddedRows, ky, w, h, writer, floats, dst, dstOffset, scratch);
  }

  /**
   * Horizontal pass of rows {@code [y0, y0 + rows)} into {@code planar} (8x8 tiles, see the class
   * comment), values stored as {@code v ^ 0x80} (that is {@code v - 128} as a signed byte,
   * which widens to an int without a mask). Columns past the window's width and rows past
   * {@code rows} hold junk nobody reads.
   *
   * <p>The source rows are copied as little-endian ints, one row every {@code stride} ints (whole
   * rows when a row is a whole number of ints, else just the span the pass reads); a gather of one
   * int from 8 rows then gives 4 bytes of 8 rows, which shifts and masks turn into the transposed
   * block {@code wide}: byte {@code j} from the span's first int, row {@code r} of the block, at
   * {@code wide[j * 8 + r]}.
   */
  private static void horizontal(ByteBuffer rgb, int srcWidth, int y0, int rows,
      PillowResample.Kernel kx, boolean flip, int width, int paddedRows, byte[] planar,
      boolean permute, DecodeScratch scratch) {
    PillowResample.Padded pad = kx.padded(srcWidth);
    int n = pad.start().length;
    int taps = pad.taps();
    int first = pad.first();
    // per output column: where its first tap starts in the transposed block, and its weights
    int[] at = scratch.ints(DecodeScratch.IntSlot.COLUMNS, width);
    int[] k = scratch.ints(DecodeScratch.IntSlot.WEIGHTS, width * taps);
    for (int x = 0; x < width; x++) {
      int sx = flip ? n - 1 - x : x;
      if (x < n) {
        at[x] = (pad.start()[sx] - first) * 3 * LANES;
        System.arraycopy(pad.k(), sx * taps, k, x * taps, taps);
      } else {
        at[x] = 0;
        Arrays.fill(k, x * taps, (x + 1) * taps, 0);
      }
    }
    int spanBytes = (pad.end() - first) * 3;
    // the rows as ints: whole rows in one copy when rows are whole ints, else the span row by row
    int stride;
    int column;
    int skew;
    int[] words;
    if (srcWidth * 3 % 4 == 0) {
      stride = srcWidth * 3 / 4;
      column = first * 3 / 4;
      skew = first * 3 % 4;
      words = scratch.ints(DecodeScratch.IntSlot.WORDS, paddedRows * stride);
      rgb.slice(y0 * srcWidth * 3, rows * srcWidth * 3).order(ByteOrder.LITTLE_ENDIAN)
          .asIntBuffer().get(words, 0, rows * stride);
    } else {
      stride = (spanBytes + 3) / 4;
      column = 0;
      skew = 0;
      words = scratch.ints(DecodeScratch.IntSlot.WORDS, paddedRows * stride);
      for (int r = 0; r < rows; r++) {
        copyRow(rgb, ((y0 + r) * srcWidth + first) * 3, spanBytes, words, r * stride);
      }
    }
    int perRow = (skew + spanBytes + 3) / 4;
    if (skew != 0) {
      for (int x = 0; x < width; x++) {
        at[x] += skew * LANES;
      }
    }
    int[] map = scratch.ints(DecodeScratch.IntSlot.GATHER, LANES);
    for (int r = 0; r < LANES; r++) {
      map[r] = r * stride;
    }
    int[] wide = scratch.ints(DecodeScratch.IntSlot.TRANSPOSED, perRow * 4 * LANES);
    byte[] block = scratch.bytes(DecodeScratch.Slot.BLOCK, 3 * width * LANES);
    long[] tile = new long[LANES];
    for (int yb = 0; yb < rows; yb += LANES) {
      for (int i = 0, base = yb * stride + column, q = 0; i < perRow; i++, q += 4 * LANES) {
        IntVector g = IntVector.fromArray(INTS, words, base + i, map, 0);
        g.and(0xFF).intoArray(wide, q);
        g.lanewise(VectorOperators.LSHR, 8).and(0xFF).intoArray(wide, q + LANES);
        g.lanewise(VectorOperators.LSHR, 16).and(0xFF).intoArray(wide, q + 2 * LANES);
        g.lanewise(VectorOperators.LSHR, 24).intoArray(wide, q + 3 * LANES);
      }
      columns(wide, at, k, taps, width, block, planar, yb * LANES, paddedRows * LANES, permute,
          tile);
    }
  }

  /**
   * Copies {@code length} bytes at {@code rgb[from]} into {@code words} at {@code at}, four
   * bytes per int, little-endian; the last int is zero-padded.
   */
  private static void copyRow(ByteBuffer rgb, int from, int length, int[] words, int at) {
    int whole = length / 4;
    rgb.slice(from, whole * 4).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words, at, whole);
    if (whole * 4 < length) {
      int v = 0;
      for (int i = whole * 4; i < length; i++) {
        v |= (rgb.get(from + i) & 0xFF) << (8 * (i - whole * 4));
      }
      words[at + whole] = v;
    }
  }

  /**
   * The {@code tiles} 8x8 tiles of {@code block} (64 bytes each, column-major) transposed into
   * {@code planar} from {@code at}, one every {@code stride} bytes, as {@code v ^ 0x80}: one byte
   * permutation each (AVX-512 VBMI's {@code vpermb}).
   */
  private static void transposeTiles(byte[] block, int tiles, byte[] planar, int at, int stride) {
    for (int tile = 0, u = 0, to = at; tile < tiles; tile++, u += TILE_BYTES, to += stride) {
      ByteVector.fromByteArray(TILE, block, u, ByteOrder.LITTLE_ENDIAN).rearrange(TRANSPOSE)
          .lanewise(VectorOperators.XOR, (byte) 0x80)
          .intoByteArray(planar, to, ByteOrder.LITTLE_ENDIAN);
    }
  }

  /**
   * Output columns of one 8-row block into {@code planar}: first into {@code block}, where {@code
   * block[(c * width + x) * 8 + r]} is channel {@code c} of output column {@code x} in row {@code
   * r} of the block (the loop unrolled for exactly 4 taps, the common downscale), then each 8x8
   * tile transposed to {@code planar[at0 + tile * stride]}. In one method on purpose: its bytecode
   * is then larger than C2's {@code FreqInlineSize}, so C2 compiles it on its own rather than
   * into {@link #horizontal}, whose compilation would otherwise reach {@code
   * NodeCountInliningCutoff} and leave vector operations uncompiled (boxed: several times slower).
   */
  private static void columns(int[] wide, int[] at, int[] k, int taps, int width,
      byte[] block, byte[] planar, int at0, int stride, boolean permute, long[] tile) {
    IntVector half = IntVector.broadcast(INTS, HALF);
    if (taps == 4) {
      for (int x = 0; x < width; x++) {
        int kb = x * 4;
        int c0 = k[kb];
        int c1 = k[kb + 1];
        int c2 = k[kb + 2];
        int c3 = k[kb + 3];
        for (int c = 0; c < 3; c++) {
          int q = at[x] + c * LANES;
          IntVector s = half.add(IntVector.fromArray(INTS, wide, q).mul(c0))
              .add(IntVector.fromArray(INTS, wide, q + 3 * LANES).mul(c1))
              .add(IntVector.fromArray(INTS, wide, q + 6 * LANES).mul(c2))
              .add(IntVector.fromArray(INTS, wide, q + 9 * LANES).mul(c3));
          narrow(s).intoArray(block, (c * width + x) * LANES);
        }
      }
    }
    for (int x = 0; taps != 4 && x < width; x++) {
      int kb = x * taps;
      for (int c = 0; c < 3; c++) {
        int q = at[x] + c * LANES;
        IntVector s = half;
        for (int t = 0; t < taps; t++, q += 3 * LANES) {
          s = s.add(IntVector.fromArray(INTS, wide, q).mul(k[kb + t]));
        }
        narrow(s).intoArray(block, (c * width + x) * LANES);
      }
    }
    int tiles = 3 * width / LANES;
    if (permute) {
      transposeTiles(block, tiles, planar, at0, stride);
    } else {
      for (int i = 0, u = 0; i < tiles; i++, u += TILE_BYTES) {
        for (int r = 0; r < LANES; r++) {
          tile[r] = (long) LONGS.get(block, u + r * LANES) ^ SIGNS;
        }
        transpose(tile, planar, at0 + i * stride, LANES);
      }
    }
  }

  /** A fixed-point sum as the byte Pillow stores: shifted down, clipped to 0..255. */
  private static ByteVector narrow(IntVector sum) {
    return (ByteVector) sum.lanewise(VectorOperators.ASHR, SHIFT).max(0).min(255)
        .convertShape(VectorOperators.I2B, BYTES, 0);
  }

  /** 8 signed bytes at {@code a[at]} as ints. */
  private static IntVector widen(byte[] a, int at) {
    return (IntVector) ByteVector.fromArray(BYTES, a, at)
        .convertShape(VectorOperators.B2I, INTS, 0);
  }

  /**
   * Vertical pass from {@code planar} and output conversion: {@code h} rows of {@code w} values
   * per channel.
   */
  private static void vertical(byte[] planar, int y0, int width, int paddedRows,
      PillowResample.Kernel ky, int w, int h, OutputWriter writer, ByteBuffer out, ArrowBuf dst,
      long dstOffset, DecodeScratch scratch) {
    int[] start = ky.start();
    int[] taps = ky.taps();
    int[] k = ky.k();
    int ksize = ky.ksize();
    boolean floats = out != null;
    float[] mean = writer.mean();
    float[] std = writer.std();
    boolean divisionFree = writer.divisionFree();
    float[] tail = floats ? scratch.floats(LANES) : null;
    byte[] rgb = scratch.bytes(DecodeScratch.Slot.ROW, 3 * width);
    int group = paddedRows * LANES;
    for (int y = 0; y < h; y++) {
      for (int c = 0; c < 3; c++) {
        int base = (c * width / LANES * paddedRows + start[y] - y0) * LANES;
        int n = taps[y];
        int kb = y * ksize;
        // planar holds v - 128: sum(v * k) = sum((v - 128) * k) + 128 * sum(k), exactly
        int bias = HALF;
        for (int t = 0; t < n; t++) {
          bias += 128 * k[kb + t];
        }
        int c0 = n == 4 ? k[kb] : 0;
        int c1 = n == 4 ? k[kb + 1] : 0;
        int c2 = n == 4 ? k[kb + 2] : 0;
        int c3 = n == 4 ? k[kb + 3] : 0;
        float m = mean == null ? 0f : mean[c];
        float d = std == null ? 1f : std[c];
        FloatVector r = FloatVector.broadcast(FLOATS, 1f / d);
        FloatVector minusStd = FloatVector.broadcast(FLOATS, -d);
        for (int x = 0, p = base; x < width; x += LANES, p += group) {
          IntVector s = IntVector.broadcast(INTS, bias);
          if (n == 4) {
            // the common downscale, unrolled
            s = s.add(widen(planar, p).mul(c0))
                .add(widen(planar, p + LANES).mul(c1))
                .add(widen(planar, p + 2 * LANES).mul(c2))
                .add(widen(planar, p + 3 * LANES).mul(c3));
          } else {
            for (int t = 0, q = p; t < n; t++, q += LANES) {
              s = s.add(widen(planar, q).mul(k[kb + t]));
            }
          }
          IntVector v = s.lanewise(VectorOperators.ASHR, SHIFT).max(0).min(255);
          if (!floats) {
            ((ByteVector) v.convertShape(VectorOperators.I2B, BYTES, 0))
                .intoArray(rgb, c * width + x);
            continue;
          }
          FloatVector f = (FloatVector) v.convert(VectorOperators.I2F, 0);
          if (divisionFree) {
            // OutputWriter.divide, 8 lanes at a time: the same bits without vector divisions
            FloatVector q = f.mul(INVERSE_255);
            f = q.fma(MINUS_255, f).fma(INVERSE_255, q);
            if (mean != null) {
              FloatVector a = f.sub(m);
              q = a.mul(r);
              f = q.fma(minusStd, a).fma(r, q);
            }
          } else {
            f = f.div(255f);
            if (mean != null) {
              f = f.sub(m).div(d);
            }
          }
          int at = ((c * h + y) * w + x) * 4;
          if (x + LANES <= w) {
            f.intoByteBuffer(out, at, ByteOrder.LITTLE_ENDIAN);
          } else {
            f.intoArray(tail, 0);
            for (int i = 0; x + i < w; i++) {
              out.putFloat(at + i * 4, tail[i]);
            }
          }
        }
      }
      if (!floats) {
        writer.writeRow(rgb, width, y, w, h, dst, dstOffset, scratch);
      }
    }
  }

  /**
   * Transposes the 8x8 bytes in {@code m} (long {@code i} is row {@code i}, byte {@code j} of it
   * column {@code j}) and stores row {@code j} of the result (column {@code j} of the input) at
   * {@code out[at + j * stride]}, 8 bytes each.
   */
  private static void transpose(long[] m, byte[] out, int at, int stride) {
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
