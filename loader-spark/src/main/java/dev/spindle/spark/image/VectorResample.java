package dev.spindle.spark.image;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
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
 *   <li>Horizontal pass, 8 source rows at a time: the rows' bytes are transposed (a gather of
 *       one word per row, then a byte permutation) and widened, so that one vector holds one
 *       (column, channel) of 8 rows; every output column is then a few multiply-adds of such
 *       vectors by a broadcast coefficient. The results (bytes) are transposed back, tile by
 *       tile, into {@code planar}: 8x8 tiles of bytes in long rows, per channel {@code c} and
 *       group {@code g} of 8 columns, row {@code r} (relative to the first row read) of columns
 *       {@code 8g .. 8g + 7} at {@code ((c * groups + g) * paddedRows + r) * 8}. A tile's
 *       transpose is one 512-bit byte permutation where the CPU has one ({@link
 *       VectorPath#PERMUTE}), else shifts and masks on longs.
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
  /** One 8-byte word of each of 8 rows, gathered for {@link #TRANSPOSE}. */
  private static final VectorSpecies<Long> WORDS = LongVector.SPECIES_512;
  /** Byte {@code r * 4 + j} of 8 rows of 4 bytes to {@code j * 8 + r}. */
  private static final VectorShuffle<Byte> TRANSPOSE_WORDS =
      VectorShuffle.fromOp(ByteVector.SPECIES_256, i -> i % LANES * 4 + i / LANES);

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
    try {
      run(stage, (first, count) -> rgb.slice(first * width * 3, count * width * 3), width, height,
          new Region(0, 0, width), reduce, writer, dst, dstOffset, permute, scratch);
    } catch (ImageException e) {
      throw new IllegalStateException(e); // a whole image in memory: nothing left to decode
    }
  }

  /**
   * The source's pixels, handed to the horizontal pass in order, a few rows at a time, for
   * example as a decoder produces them.
   */
  @FunctionalInterface
  interface Source {
    /**
     * Rows {@code [first, first + count)} of the region (relative to its first row), one after
     * another, each {@link Region#rowPixels()} pixels wide, from position 0 of the buffer
     * returned; valid until the next call. Called with consecutive ranges.
     */
    ByteBuffer rows(int first, int count) throws ImageException;
  }

  /**
   * Where the pixels of a {@code width x height} source image are: rows of {@code rowPixels}
   * pixels whose first is the source's column {@code x}, the first row being the source's row
   * {@code y}. A whole image is {@code (0, 0, width)}; a decoded
   * region ({@link NativeJpeg}) holds at least {@link #sourceRegion}.
   */
  record Region(int x, int y, int rowPixels) {}

  /**
   * {@link #run} on the part of a {@code width x height} image that {@code region} places in
   * {@code source}; it must hold every pixel {@link #sourceRegion} names. Reads the source's
   * rows in order while it resamples them, so a decoder's rows are used while in cache.
   *
   * @throws ImageException when {@code source} cannot decode its rows
   */
  static void run(Stage stage, Source source, int width, int height, Region region, int reduce,
      OutputWriter writer, ArrowBuf dst, long dstOffset, boolean permute, DecodeScratch scratch)
      throws ImageException {
    Stage.Rect win = stage.window();
    ByteBuffer floats = writer.mode() != OutputMode.FLOAT32_CHW ? null
        : dst.nioBuffer(dstOffset, win.width() * win.height() * 3 * 4)
            .order(ByteOrder.LITTLE_ENDIAN);
    run(stage, source, width, height, region, reduce, writer, floats, dst, dstOffset, permute,
        scratch);
  }

  /**
   * The source pixels {@link #run} reads of a {@code width x height} image (at {@code 1 /
   * reduce} scale): {@code {x0, y0, x1, y1}}, columns {@code [x0, x1)} and rows {@code [y0,
   * y1)}, the taps of the window's columns and rows.
   */
  static int[] sourceRegion(Stage stage, int width, int height, int reduce,
      DecodeScratch scratch) {
    Stage.Rect win = stage.window();
    PillowResample.Padded pad = StageRunner.kernel(stage, reduce, width, true, win.x(),
        win.width(), scratch).padded(width);
    PillowResample.Kernel ky =
        StageRunner.kernel(stage, reduce, height, false, win.y(), win.height(), scratch);
    return new int[] {pad.first(), ky.firstInput(), pad.end(), ky.endInput()};
  }

  /** {@link #run}; float32 output goes to {@code floats} (from 0), other modes to {@code dst}. */
  private static void run(Stage stage, Source source, int srcWidth, int srcHeight,
      Region region, int reduce, OutputWriter writer, ByteBuffer floats, ArrowBuf dst,
      long dstOffset, boolean permute, DecodeScratch scratch) throws ImageException {
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
    horizontal(source, srcWidth, region, y0, rows, kx, stage.flip(), width, paddedRows, planar,
        permute, scratch);
    vertical(planar, y0, width, paddedRows, ky, w, h, writer, floats, dst, dstOffset, scratch);
  }

  /**
   * Horizontal pass of rows {@code [y0, y0 + rows)} into {@code planar} (8x8 tiles, see the class
   * comment), values stored as {@code v ^ 0x80} (that is {@code v - 128} as a signed byte,
   * which widens to an int without a mask). Columns past the window's width and rows past
   * {@code rows} hold junk nobody reads.
   *
   * <p>8 rows at a time, the source's rows are first copied as little-endian words, one row every
   * {@code stride} words (whole rows when a row is a whole number of words, else just the span
   * the pass reads): 8-byte words when {@code permute}, else 4-byte ones. Then a gather of one
   * word from each row and one byte permutation give the transposed block {@code wide}: byte
   * {@code j} from the span's first word, row {@code r} of the block, at {@code wide[j * 8 + r]},
   * again as {@code v ^ 0x80}.
   */
  private static void horizontal(Source source, int srcWidth, Region region, int y0, int rows,
      PillowResample.Kernel kx, boolean flip, int width, int paddedRows, byte[] planar,
      boolean permute, DecodeScratch scratch) throws ImageException {
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
    int unit = permute ? 8 : 4;
    // the source's rows as the region holds them: first column and row, pixels per row
    int rowPixels = region.rowPixels();
    int firstInRow = first - region.x();
    int firstRow = y0 - region.y();
    boolean whole = rowPixels * 3 % unit == 0;
    int stride = whole ? rowPixels * 3 / unit : (spanBytes + unit - 1) / unit;
    int column = whole ? firstInRow * 3 / unit : 0;
    int skew = whole ? firstInRow * 3 % unit : 0;
    long[] longs = permute ? scratch.longs(paddedRows * stride) : null;
    int[] ints = permute ? null : scratch.ints(DecodeScratch.IntSlot.WORDS, paddedRows * stride);
    int perRow = (skew + spanBytes + unit - 1) / unit;
    if (skew != 0) {
      for (int x = 0; x < width; x++) {
        at[x] += skew * LANES;
      }
    }
    int[] map = scratch.ints(DecodeScratch.IntSlot.GATHER, LANES);
    for (int r = 0; r < LANES; r++) {
      map[r] = r * stride;
    }
    byte[] wide = scratch.bytes(DecodeScratch.Slot.TRANSPOSED, perRow * unit * LANES);
    byte[] block = scratch.bytes(DecodeScratch.Slot.BLOCK, 3 * width * LANES);
    long[] tile = new long[LANES];
    for (int yb = 0; yb < rows; yb += LANES) {
      // this block's rows, taken from the source now: a decoder's output is still in cache
      int count = Math.min(LANES, rows - yb);
      ByteBuffer band = source.rows(firstRow + yb, count);
      if (whole) {
        ByteBuffer words = band.slice(0, count * rowPixels * 3).order(ByteOrder.LITTLE_ENDIAN);
        if (permute) {
          words.asLongBuffer().get(longs, yb * stride, count * stride);
        } else {
          words.asIntBuffer().get(ints, yb * stride, count * stride);
        }
      } else {
        for (int r = 0; r < count; r++) {
          ByteBuffer span = band.slice((r * rowPixels + firstInRow) * 3, spanBytes)
              .order(ByteOrder.LITTLE_ENDIAN);
          if (permute) {
            copyRow(span, longs, (yb + r) * stride);
          } else {
            copyRow(span, ints, (yb + r) * stride);
          }
        }
      }
      if (permute) {
        transposeRows(longs, yb * stride + column, map, perRow, wide);
      } else {
        transposeRows(ints, yb * stride + column, map, perRow, wide);
      }
      columns(wide, at, k, taps, width, block, planar, yb * LANES, paddedRows * LANES, permute,
          tile);
    }
  }

  /**
   * {@code count} 8-byte words of 8 rows, from {@code words[base]} (rows {@code map} apart), into
   * {@code wide} byte by byte with the rows interleaved, as {@code v ^ 0x80}: a 512-bit gather
   * and a byte permutation per word.
   */
  private static void transposeRows(long[] words, int base, int[] map, int count, byte[] wide) {
    for (int i = 0, q = 0; i < count; i++, q += TILE_BYTES) {
      LongVector.fromArray(WORDS, words, base + i, map, 0).reinterpretAsBytes()
          .rearrange(TRANSPOSE).lanewise(VectorOperators.XOR, (byte) 0x80)
          .intoByteArray(wide, q, ByteOrder.LITTLE_ENDIAN);
    }
  }

  /** {@link #transposeRows(long[], int, int[], int, byte[])} for 4-byte words, 256 bits wide. */
  private static void transposeRows(int[] words, int base, int[] map, int count, byte[] wide) {
    for (int i = 0, q = 0; i < count; i++, q += 4 * LANES) {
      IntVector.fromArray(INTS, words, base + i, map, 0).reinterpretAsBytes()
          .rearrange(TRANSPOSE_WORDS).lanewise(VectorOperators.XOR, (byte) 0x80)
          .intoByteArray(wide, q, ByteOrder.LITTLE_ENDIAN);
    }
  }

  /**
   * Copies {@code span} (from 0, little-endian) into {@code words} from {@code at}, eight bytes
   * per long; the last long is zero-padded.
   */
  private static void copyRow(ByteBuffer span, long[] words, int at) {
    int whole = span.capacity() / 8;
    span.asLongBuffer().get(words, at, whole);
    if (whole * 8 < span.capacity()) {
      long v = 0;
      for (int i = whole * 8; i < span.capacity(); i++) {
        v |= (span.get(i) & 0xFFL) << (8 * (i - whole * 8));
      }
      words[at + whole] = v;
    }
  }

  /** {@link #copyRow(ByteBuffer, long[], int)}, four bytes per int. */
  private static void copyRow(ByteBuffer span, int[] words, int at) {
    int whole = span.capacity() / 4;
    span.asIntBuffer().get(words, at, whole);
    if (whole * 4 < span.capacity()) {
      int v = 0;
      for (int i = whole * 4; i < span.capacity(); i++) {
        v |= (span.get(i) & 0xFF) << (8 * (i - whole * 4));
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
   * r} of the block (the loop unrolled for exactly 4 taps, the common downscale; other counts in
   * {@link #anyTaps}), then each 8x8 tile transposed to {@code planar[at0 + tile * stride]}. In
   * one method on purpose: its bytecode (328 bytes) is then larger than C2's {@code
   * FreqInlineSize} (325), so C2 compiles it on its own rather than into {@link #horizontal},
   * whose compilation would otherwise reach {@code NodeCountInliningCutoff} and leave vector
   * operations uncompiled (boxed: several times slower).
   */
  private static void columns(byte[] wide, int[] at, int[] k, int taps, int width,
      byte[] block, byte[] planar, int at0, int stride, boolean permute, long[] tile) {
    // wide holds v - 128: sum(v * k) = sum((v - 128) * k) + 128 * sum(k), exactly
    if (taps == 4) {
      for (int x = 0; x < width; x++) {
        int kb = x * 4;
        int c0 = k[kb];
        int c1 = k[kb + 1];
        int c2 = k[kb + 2];
        int c3 = k[kb + 3];
        IntVector bias = IntVector.broadcast(INTS, HALF + 128 * (c0 + c1 + c2 + c3));
        for (int c = 0; c < 3; c++) {
          int q = at[x] + c * LANES;
          IntVector s = bias.add(widen(wide, q).mul(c0))
              .add(widen(wide, q + 3 * LANES).mul(c1))
              .add(widen(wide, q + 6 * LANES).mul(c2))
              .add(widen(wide, q + 9 * LANES).mul(c3));
          narrow(s).intoArray(block, (c * width + x) * LANES);
        }
      }
    }
    if (taps != 4) {
      anyTaps(wide, at, k, taps, width, block);
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

  /**
   * {@link #columns}' sums for any number of taps; in its own method so that its profile does
   * not shape the compiled 4-tap loop (measured: the warm-up's other kernels made that 10 %
   * slower).
   */
  private static void anyTaps(byte[] wide, int[] at, int[] k, int taps, int width,
      byte[] block) {
    for (int x = 0; x < width; x++) {
      int kb = x * taps;
      IntVector bias = IntVector.broadcast(INTS, bias(k, kb, taps));
      for (int c = 0; c < 3; c++) {
        IntVector s = bias;
        for (int t = 0, q = at[x] + c * LANES; t < taps; t++, q += 3 * LANES) {
          s = s.add(widen(wide, q).mul(k[kb + t]));
        }
        narrow(s).intoArray(block, (c * width + x) * LANES);
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
   * per channel. Float32 output and the other modes run in separate methods, so that C2 compiles
   * each with only its own branches: one method for both, once the warm-up (or a mix of
   * transforms) has taken both, measured 15-20 % slower for float32.
   */
  private static void vertical(byte[] planar, int y0, int width, int paddedRows,
      PillowResample.Kernel ky, int w, int h, OutputWriter writer, ByteBuffer out, ArrowBuf dst,
      long dstOffset, DecodeScratch scratch) {
    if (out != null) {
      verticalFloats(planar, y0, width, paddedRows, ky, w, h, writer, out, scratch);
    } else {
      verticalBytes(planar, y0, width, paddedRows, ky, w, h, writer, dst, dstOffset, scratch);
    }
  }

  /** {@link #vertical} to float32 CHW in {@code out} (from 0). */
  private static void verticalFloats(byte[] planar, int y0, int width, int paddedRows,
      PillowResample.Kernel ky, int w, int h, OutputWriter writer, ByteBuffer out,
      DecodeScratch scratch) {
    int[] start = ky.start();
    int[] taps = ky.taps();
    int[] k = ky.k();
    int ksize = ky.ksize();
    float[] mean = writer.mean();
    float[] std = writer.std();
    boolean divisionFree = writer.divisionFree();
    float[] tail = scratch.floats(LANES);
    int group = paddedRows * LANES;
    for (int y = 0; y < h; y++) {
      int n = taps[y];
      int kb = y * ksize;
      IntVector bias = IntVector.broadcast(INTS, bias(k, kb, n));
      int c0 = n == 4 ? k[kb] : 0;
      int c1 = n == 4 ? k[kb + 1] : 0;
      int c2 = n == 4 ? k[kb + 2] : 0;
      int c3 = n == 4 ? k[kb + 3] : 0;
      for (int c = 0; c < 3; c++) {
        int base = (c * width / LANES * paddedRows + start[y] - y0) * LANES;
        float m = mean == null ? 0f : mean[c];
        float d = std == null ? 1f : std[c];
        FloatVector r = FloatVector.broadcast(FLOATS, 1f / d);
        FloatVector minusStd = FloatVector.broadcast(FLOATS, -d);
        for (int x = 0, p = base; x < width; x += LANES, p += group) {
          FloatVector f = (FloatVector) sum(planar, p, bias, n, c0, c1, c2, c3, k, kb)
              .convert(VectorOperators.I2F, 0);
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
    }
  }

  /** {@link #vertical} to the other modes: rows of bytes through {@link OutputWriter#writeRow}. */
  private static void verticalBytes(byte[] planar, int y0, int width, int paddedRows,
      PillowResample.Kernel ky, int w, int h, OutputWriter writer, ArrowBuf dst, long dstOffset,
      DecodeScratch scratch) {
    int[] start = ky.start();
    int[] taps = ky.taps();
    int[] k = ky.k();
    int ksize = ky.ksize();
    byte[] rgb = scratch.bytes(DecodeScratch.Slot.ROW, 3 * width);
    int group = paddedRows * LANES;
    for (int y = 0; y < h; y++) {
      int n = taps[y];
      int kb = y * ksize;
      IntVector bias = IntVector.broadcast(INTS, bias(k, kb, n));
      int c0 = n == 4 ? k[kb] : 0;
      int c1 = n == 4 ? k[kb + 1] : 0;
      int c2 = n == 4 ? k[kb + 2] : 0;
      int c3 = n == 4 ? k[kb + 3] : 0;
      for (int c = 0; c < 3; c++) {
        int base = (c * width / LANES * paddedRows + start[y] - y0) * LANES;
        for (int x = 0, p = base; x < width; x += LANES, p += group) {
          ((ByteVector) sum(planar, p, bias, n, c0, c1, c2, c3, k, kb)
              .convertShape(VectorOperators.I2B, BYTES, 0)).intoArray(rgb, c * width + x);
        }
      }
      writer.writeRow(rgb, width, y, w, h, dst, dstOffset, scratch);
    }
  }

  /**
   * {@code HALF + 128 * sum(k[kb .. kb + n))}: what {@link #sum} starts from, as its taps are
   * stored {@code v - 128} (and {@code sum(v * k) = sum((v - 128) * k) + 128 * sum(k)}, exactly).
   */
  private static int bias(int[] k, int kb, int n) {
    int bias = HALF;
    for (int t = 0; t < n; t++) {
      bias += 128 * k[kb + t];
    }
    return bias;
  }

  /**
   * One vertical output of 8 columns, as 0..255: {@code bias} plus {@code n} taps, consecutive
   * 8-byte rows from {@code planar[p]}, weighted {@code c0 .. c3} when {@code n} is 4 (the common
   * downscale, unrolled), else {@code k[kb ..]}.
   */
  private static IntVector sum(byte[] planar, int p, IntVector bias, int n, int c0, int c1,
      int c2, int c3, int[] k, int kb) {
    IntVector s = bias;
    if (n == 4) {
      s = s.add(widen(planar, p).mul(c0))
          .add(widen(planar, p + LANES).mul(c1))
          .add(widen(planar, p + 2 * LANES).mul(c2))
          .add(widen(planar, p + 3 * LANES).mul(c3));
    } else {
      for (int t = 0, q = p; t < n; t++, q += LANES) {
        s = s.add(widen(planar, q).mul(k[kb + t]));
      }
    }
    return s.lanewise(VectorOperators.ASHR, SHIFT).max(0).min(255);
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
