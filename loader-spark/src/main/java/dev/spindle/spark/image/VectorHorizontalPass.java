package dev.spindle.spark.image;

import static dev.spindle.spark.image.VectorLanes.HALF;
import static dev.spindle.spark.image.VectorLanes.INTS;
import static dev.spindle.spark.image.VectorLanes.LANES;
import static dev.spindle.spark.image.VectorLanes.bias;
import static dev.spindle.spark.image.VectorLanes.narrow;
import static dev.spindle.spark.image.VectorLanes.widen;
import static dev.spindle.spark.image.VectorTranspose.LONGS;
import static dev.spindle.spark.image.VectorTranspose.SIGNS;
import static dev.spindle.spark.image.VectorTranspose.TILE_BYTES;
import static dev.spindle.spark.image.VectorTranspose.transpose;
import static dev.spindle.spark.image.VectorTranspose.transposeRows;
import static dev.spindle.spark.image.VectorTranspose.transposeTiles;

import dev.spindle.spark.image.VectorResample.Region;
import dev.spindle.spark.image.VectorResample.Source;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.IntVector;

/**
 * The horizontal pass of {@link VectorResample}, 8 source rows at a time: the rows' bytes are
 * transposed (a gather of one word per row, then a byte permutation; {@link VectorTranspose}) and
 * widened, so that one vector holds one (column, channel) of 8 rows; every output column is then a
 * few multiply-adds of such vectors by a broadcast coefficient. The results (bytes) are transposed
 * back, tile by tile, into {@code planar}: 8x8 tiles of bytes in long rows, per channel {@code c}
 * and group {@code g} of 8 columns, row {@code r} (relative to the first row read) of columns
 * {@code 8g .. 8g + 7} at {@code ((c * groups + g) * paddedRows + r) * 8}, which {@link
 * VectorVerticalPass} reads. A tile's transpose is one 512-bit byte permutation where the CPU has
 * one ({@link VectorPath#PERMUTE}), else shifts and masks on longs.
 *
 * <p>Stateless; called on the thread that runs the transform; buffers come from its {@link
 * DecodeScratch}, the source's rows from the caller's {@link VectorResample.Source}.
 */
final class VectorHorizontalPass {
  private VectorHorizontalPass() {}

  /**
   * Horizontal pass of rows {@code [y0, y0 + rows)} into {@code planar} (8x8 tiles, see the class
   * comment), values stored as {@code v ^ 0x80} (that is {@code v - 128} as a signed byte, which
   * widens to an int without a mask). Columns past the window's width and rows past {@code rows}
   * hold junk nobody reads.
   *
   * <p>8 rows at a time, the source's rows are first copied as little-endian words, one row every
   * {@code stride} words (whole rows when a row is a whole number of words, else just the span the
   * pass reads): 8-byte words when {@code permute}, else 4-byte ones. Then a gather of one word
   * from each row and one byte permutation give the transposed block {@code wide}: byte {@code j}
   * from the span's first word, row {@code r} of the block, at {@code wide[j * 8 + r]}, again as
   * {@code v ^ 0x80}.
   */
  static void horizontal(
      Source source,
      int srcWidth,
      Region region,
      int y0,
      int rows,
      PillowResample.Kernel kx,
      boolean flip,
      int width,
      int paddedRows,
      byte[] planar,
      boolean permute,
      DecodeScratch scratch)
      throws ImageException {
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
          ByteBuffer span =
              band.slice((r * rowPixels + firstInRow) * 3, spanBytes)
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
      columns(
          wide, at, k, taps, width, block, planar, yb * LANES, paddedRows * LANES, permute, tile);
    }
  }

  /**
   * Copies {@code span} (from 0, little-endian) into {@code words} from {@code at}, eight bytes per
   * long; the last long is zero-padded.
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
   * Output columns of one 8-row block into {@code planar}: first into {@code block}, where {@code
   * block[(c * width + x) * 8 + r]} is channel {@code c} of output column {@code x} in row {@code
   * r} of the block (the loop unrolled for exactly 4 taps, the common downscale; other counts in
   * {@link #anyTaps}), then each 8x8 tile transposed to {@code planar[at0 + tile * stride]}. In one
   * method on purpose: its bytecode (327 bytes) is then larger than C2's {@code FreqInlineSize}
   * (325), so C2 compiles it on its own rather than into {@link #horizontal}, whose compilation
   * would otherwise reach {@code NodeCountInliningCutoff} and leave vector operations uncompiled
   * (boxed: several times slower).
   */
  private static void columns(
      byte[] wide,
      int[] at,
      int[] k,
      int taps,
      int width,
      byte[] block,
      byte[] planar,
      int at0,
      int stride,
      boolean permute,
      long[] tile) {
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
          IntVector s =
              bias.add(widen(wide, q).mul(c0))
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
   * {@link #columns}' sums for any number of taps; in its own method so that its profile does not
   * shape the compiled 4-tap loop (measured: the warm-up's other kernels made that 10 % slower).
   */
  private static void anyTaps(byte[] wide, int[] at, int[] k, int taps, int width, byte[] block) {
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
}
