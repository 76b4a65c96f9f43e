package dev.spindle.spark.image;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.Float16;

/**
 * Converts the final RGB HWC uint8 image into the {@link OutputMode} and writes it into the
 * destination Arrow buffer. Float values come from per-channel 256-entry tables built with the same
 * float32 operations as torchvision ({@code v / 255f}, then {@code (x - mean) / std}), so they
 * equal torch's values bit for bit. Immutable; any thread may call it.
 */
final class OutputWriter implements java.io.Serializable {
  private static final long serialVersionUID = 4L;

  private final OutputMode mode;
  private final float[][] floats;
  private final short[][] halves;
  private final float[] mean;
  private final float[] std;
  private final boolean divisionFree;
  private final float[] floatTable;
  private final short[] halfTable;

  OutputWriter(OutputMode mode, ImageOp.Normalize normalize) {
    this.mode = mode;
    this.mean = normalize == null ? null : normalize.mean().clone();
    this.std = normalize == null ? null : normalize.std().clone();
    this.floats = new float[3][256];
    this.halves = new short[3][256];
    for (int c = 0; c < 3; c++) {
      for (int v = 0; v < 256; v++) {
        float x = (float) v / 255f;
        if (normalize != null) {
          x = (x - normalize.mean()[c]) / normalize.std()[c];
        }
        floats[c][v] = x;
        halves[c][v] = Float16.toFloat16(x); // ties to even, as numpy and torch round
      }
    }
    this.divisionFree = divisionFree(floats, mean, std);
    this.floatTable = new float[3 * 256];
    this.halfTable = new short[3 * 256];
    for (int c = 0; c < 3; c++) {
      System.arraycopy(floats[c], 0, floatTable, c * 256, 256);
      System.arraycopy(halves[c], 0, halfTable, c * 256, 256);
    }
  }

  /**
   * The float32 value of every byte of every channel, channel {@code c}'s value {@code v} at {@code
   * c * 256 + v} (for {@link NativeResample}). Not to be modified.
   */
  float[] floatTable() {
    return floatTable;
  }

  /** {@link #floatTable} as float16 bits (ties to even). Not to be modified. */
  short[] halfTable() {
    return halfTable;
  }

  /**
   * {@code a / b} as a multiplication by {@code r = 1 / b} and one correction step with fused
   * multiply-adds ({@code q = a * r}, then {@code q + (a - q * b) * r}): correctly rounded in most
   * cases (Markstein's theorem), so {@link #divisionFree} checks every value it is used for. Three
   * multiply-adds cost a fraction of one vector division.
   */
  static float divide(float a, float b, float r) {
    float q = a * r;
    return Math.fma(Math.fma(-q, b, a), r, q);
  }

  /**
   * Whether {@link #divide} gives every table value bit for bit: {@code v / 255f} and, with
   * normalize, {@code (x - mean) / std}, for all 256 values of each channel.
   */
  private static boolean divisionFree(float[][] floats, float[] mean, float[] std) {
    for (int c = 0; c < 3; c++) {
      for (int v = 0; v < 256; v++) {
        float x = divide(v, 255f, 1f / 255f);
        if (mean != null) {
          x = divide(x - mean[c], std[c], 1f / std[c]);
        }
        if (Float.floatToRawIntBits(x) != Float.floatToRawIntBits(floats[c][v])) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Whether float32 output may use {@link #divide} instead of divisions: checked, when this writer
   * was built, to give the same bits for every value of every channel (true for ImageNet's mean and
   * std).
   */
  boolean divisionFree() {
    return divisionFree;
  }

  OutputMode mode() {
    return mode;
  }

  /** Normalize's per-channel mean, or null without normalize. Not to be modified. */
  float[] mean() {
    return mean;
  }

  /** Normalize's per-channel std, or null without normalize. Not to be modified. */
  float[] std() {
    return std;
  }

  /**
   * Writes output row {@code y} of an image of {@code width x height}: channel {@code c}'s {@code
   * width} values are at {@code planar[c * stride]}. For uint8 CHW and float16 CHW: {@link
   * VectorVerticalPass} writes float32 CHW and uint8 HWC rows itself, in vectors.
   */
  void writeRow(
      byte[] planar,
      int stride,
      int y,
      int width,
      int height,
      ArrowBuf dst,
      long offset,
      DecodeScratch scratch) {
    long plane = (long) width * height;
    switch (mode) {
      case UINT8_CHW -> {
        for (int c = 0; c < 3; c++) {
          dst.setBytes(offset + c * plane + (long) y * width, planar, c * stride, width);
        }
      }
      case UINT8_HWC, FLOAT32_CHW ->
          throw new IllegalStateException(
              mode + " rows are written by VectorVerticalPass itself, not through writeRow");
      default -> {
        short[] out = scratch.shorts(width);
        for (int c = 0; c < 3; c++) {
          short[] t = halves[c];
          for (int x = 0; x < width; x++) {
            out[x] = t[planar[c * stride + x] & 0xFF];
          }
          view(dst, offset + (c * plane + (long) y * width) * 2, width * 2L)
              .asShortBuffer()
              .put(out, 0, width);
        }
      }
    }
  }

  /** Writes {@code width * height * 3} pixels from {@code rgb} at {@code dst[offset]}. */
  void write(byte[] rgb, int width, int height, ArrowBuf dst, long offset, DecodeScratch scratch) {
    int plane = width * height;
    int n = plane * 3;
    switch (mode) {
      case UINT8_HWC -> dst.setBytes(offset, rgb, 0, n);
      case UINT8_CHW -> {
        byte[] out = scratch.bytes(DecodeScratch.Slot.CONVERTED, n);
        for (int i = 0, p = 0; i < plane; i++, p += 3) {
          out[i] = rgb[p];
          out[plane + i] = rgb[p + 1];
          out[2 * plane + i] = rgb[p + 2];
        }
        dst.setBytes(offset, out, 0, n);
      }
      case FLOAT32_CHW -> {
        float[] out = scratch.floats(n);
        float[] r = floats[0];
        float[] g = floats[1];
        float[] b = floats[2];
        for (int i = 0, p = 0; i < plane; i++, p += 3) {
          out[i] = r[rgb[p] & 0xFF];
          out[plane + i] = g[rgb[p + 1] & 0xFF];
          out[2 * plane + i] = b[rgb[p + 2] & 0xFF];
        }
        view(dst, offset, n * 4L).asFloatBuffer().put(out, 0, n);
      }
      default -> {
        short[] out = scratch.shorts(n);
        short[] r = halves[0];
        short[] g = halves[1];
        short[] b = halves[2];
        for (int i = 0, p = 0; i < plane; i++, p += 3) {
          out[i] = r[rgb[p] & 0xFF];
          out[plane + i] = g[rgb[p + 1] & 0xFF];
          out[2 * plane + i] = b[rgb[p + 2] & 0xFF];
        }
        view(dst, offset, n * 2L).asShortBuffer().put(out, 0, n);
      }
    }
  }

  /** A little-endian view of {@code dst[offset, offset + length)}: bulk puts become copies. */
  private static ByteBuffer view(ArrowBuf dst, long offset, long length) {
    return dst.nioBuffer(offset, (int) length).order(ByteOrder.LITTLE_ENDIAN);
  }
}
