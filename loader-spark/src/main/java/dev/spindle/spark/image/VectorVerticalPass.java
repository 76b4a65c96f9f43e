package dev.spindle.spark.image;

import static dev.spindle.spark.image.VectorLanes.BYTES;
import static dev.spindle.spark.image.VectorLanes.INTS;
import static dev.spindle.spark.image.VectorLanes.LANES;
import static dev.spindle.spark.image.VectorLanes.SHIFT;
import static dev.spindle.spark.image.VectorLanes.bias;
import static dev.spindle.spark.image.VectorLanes.widen;

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
 * The vertical pass of {@link VectorResample}, 8 output columns at a time from the {@code planar}
 * tiles {@link VectorHorizontalPass} wrote, where an output's taps are consecutive 8-byte rows of
 * one column group, fused with the output conversion: float32 CHW is {@code (v / 255f - mean) /
 * std} in float32 vector arithmetic (the same IEEE results as torch's and {@link OutputWriter}'s;
 * each division is a multiplication with an FMA correction where {@link OutputWriter#divisionFree}
 * has checked that this gives the same bits for all 256 values), stored straight into the Arrow
 * buffer; uint8 HWC is interleaved in vectors too, a row at a time; the other modes go through
 * {@link OutputWriter#writeRow}.
 *
 * <p>Stateless; called on the thread that runs the transform; buffers come from its {@link
 * DecodeScratch}; the destination is the caller's.
 */
final class VectorVerticalPass {
  private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_256;
  private static final FloatVector INVERSE_255 = FloatVector.broadcast(FLOATS, 1f / 255f);
  private static final FloatVector MINUS_255 = FloatVector.broadcast(FLOATS, -255f);

  /**
   * Bytes {@code 4i .. 4i + 2} of 8 little-endian ints to {@code 3i .. 3i + 2}: 8 pixels' r, g, b;
   * the last 8 lanes (past the pixels) take byte 3, a zero.
   */
  private static final VectorShuffle<Byte> PACK_PIXELS =
      VectorShuffle.fromOp(ByteVector.SPECIES_256, i -> i < 3 * LANES ? i / 3 * 4 + i % 3 : 3);

  /** Bytes a {@link #PACK_PIXELS} store writes past its 8 pixels. */
  private static final int PIXEL_SLACK = 32 - 3 * LANES;

  private VectorVerticalPass() {}

  /**
   * Vertical pass from {@code planar} and output conversion: {@code h} rows of {@code w} values per
   * channel. Float32 output and the other modes run in separate methods, so that C2 compiles each
   * with only its own branches: one method for both, once the warm-up (or a mix of transforms) has
   * taken both, measured 15-20 % slower for float32.
   */
  static void vertical(
      byte[] planar,
      int y0,
      int width,
      int paddedRows,
      PillowResample.Kernel ky,
      int w,
      int h,
      OutputWriter writer,
      ByteBuffer out,
      ArrowBuf dst,
      long dstOffset,
      DecodeScratch scratch) {
    if (out != null) {
      verticalFloats(planar, y0, width, paddedRows, ky, w, h, writer, out, scratch);
    } else if (writer.mode() == OutputMode.UINT8_HWC) {
      verticalInterleaved(planar, y0, width, paddedRows, ky, w, h, dst, dstOffset, scratch);
    } else {
      verticalBytes(planar, y0, width, paddedRows, ky, w, h, writer, dst, dstOffset, scratch);
    }
  }

  /** {@link #vertical} to float32 CHW in {@code out} (from 0). */
  private static void verticalFloats(
      byte[] planar,
      int y0,
      int width,
      int paddedRows,
      PillowResample.Kernel ky,
      int w,
      int h,
      OutputWriter writer,
      ByteBuffer out,
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
          FloatVector f =
              (FloatVector)
                  sum(planar, p, bias, n, c0, c1, c2, c3, k, kb).convert(VectorOperators.I2F, 0);
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

  /**
   * {@link #vertical} to uint8 HWC: the three channels' sums of 8 columns packed into one int per
   * pixel ({@code r | g << 8 | b << 16}) and squeezed into the 24 bytes of 8 interleaved pixels by
   * one byte permutation, a row at a time into {@code ROW} and copied to {@code dst} (a
   * byte-by-byte interleave of the planar rows cost a tenth of an image's time).
   */
  private static void verticalInterleaved(
      byte[] planar,
      int y0,
      int width,
      int paddedRows,
      PillowResample.Kernel ky,
      int w,
      int h,
      ArrowBuf dst,
      long dstOffset,
      DecodeScratch scratch) {
    int[] start = ky.start();
    int[] taps = ky.taps();
    int[] k = ky.k();
    int ksize = ky.ksize();
    // each store writes 32 bytes of which 24 are pixels: the last one reaches 8 bytes past the row
    byte[] row = scratch.bytes(DecodeScratch.Slot.ROW, 3 * width + PIXEL_SLACK);
    int group = paddedRows * LANES;
    int plane = width * paddedRows;
    int[] pixels = scratch.ints(DecodeScratch.IntSlot.PIXELS, width);
    for (int y = 0; y < h; y++) {
      int n = taps[y];
      int kb = y * ksize;
      IntVector bias = IntVector.broadcast(INTS, bias(k, kb, n));
      int c0 = n == 4 ? k[kb] : 0;
      int c1 = n == 4 ? k[kb + 1] : 0;
      int c2 = n == 4 ? k[kb + 2] : 0;
      int c3 = n == 4 ? k[kb + 3] : 0;
      int base = (start[y] - y0) * LANES;
      // one call of sum: C2 inlines it here, where three calls in this method were not inlined
      // and boxed their vectors
      Arrays.fill(pixels, 0, width, 0);
      for (int c = 0; c < 3; c++) {
        for (int x = 0, p = base + c * plane; x < width; x += LANES, p += group) {
          IntVector.fromArray(INTS, pixels, x)
              .or(
                  sum(planar, p, bias, n, c0, c1, c2, c3, k, kb)
                      .lanewise(VectorOperators.LSHL, 8 * c))
              .intoArray(pixels, x);
        }
      }
      for (int x = 0; x < width; x += LANES) {
        IntVector.fromArray(INTS, pixels, x)
            .reinterpretAsBytes()
            .rearrange(PACK_PIXELS)
            .intoArray(row, 3 * x);
      }
      dst.setBytes(dstOffset + (long) y * w * 3, row, 0, 3L * w);
    }
  }

  /** {@link #vertical} to the other modes: rows of bytes through {@link OutputWriter#writeRow}. */
  private static void verticalBytes(
      byte[] planar,
      int y0,
      int width,
      int paddedRows,
      PillowResample.Kernel ky,
      int w,
      int h,
      OutputWriter writer,
      ArrowBuf dst,
      long dstOffset,
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
          ((ByteVector)
                  sum(planar, p, bias, n, c0, c1, c2, c3, k, kb)
                      .convertShape(VectorOperators.I2B, BYTES, 0))
              .intoArray(rgb, c * width + x);
        }
      }
      writer.writeRow(rgb, width, y, w, h, dst, dstOffset, scratch);
    }
  }

  /**
   * One vertical output of 8 columns, as 0..255: {@code bias} plus {@code n} taps, consecutive
   * 8-byte rows from {@code planar[p]}, weighted {@code c0 .. c3} when {@code n} is 4 (the common
   * downscale, unrolled), else {@code k[kb ..]}.
   */
  private static IntVector sum(
      byte[] planar,
      int p,
      IntVector bias,
      int n,
      int c0,
      int c1,
      int c2,
      int c3,
      int[] k,
      int kb) {
    IntVector s = bias;
    if (n == 4) {
      s =
          s.add(widen(planar, p).mul(c0))
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
}
