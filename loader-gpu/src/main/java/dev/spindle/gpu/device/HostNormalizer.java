package dev.spindle.gpu.device;

import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The CPU twin of the CUDA kernel {@code spindle_normalize_*}: uint8 HWC to CHW float32/float16
 * with one fused multiply-add per value, so both paths round identically. Inputs are bytes, so each
 * channel's 256 possible outputs are computed once into a lookup table and the hot loop is a load,
 * a lookup and a store. Stateless; any thread.
 */
public final class HostNormalizer {
  private HostNormalizer() {}

  /**
   * Normalises {@code rows} images from native address {@code src} to native address {@code dst}.
   *
   * @param table {@link NormalizeSpec#table()}
   */
  public static void normalize(long src, long dst, int rows, NormalizeSpec spec, float[] table) {
    normalize(src, dst, rows, spec, table, new int[256 * spec.channels()]);
  }

  /** As above, with a caller-owned lookup scratch of at least {@code 256 * channels} ints. */
  static void normalize(
      long src, long dst, int rows, NormalizeSpec spec, float[] table, int[] lut) {
    int c = spec.channels();
    if (spec.type() == ElementType.UINT8) {
      throw new IllegalArgumentException(
          "Invalid element type for normalisation: UINT8 (must be FLOAT16 or FLOAT32)");
    }
    boolean f32 = spec.type() == ElementType.FLOAT32;
    for (int ch = 0; ch < c; ch++) {
      for (int x = 0; x < 256; x++) {
        float v = Math.fma((float) x, table[ch], table[c + ch]);
        lut[ch * 256 + x] = f32 ? Float.floatToRawIntBits(v) : Half.fromFloat(v);
      }
    }
    int hw = spec.pixels();
    int elem = spec.type().bytes();
    for (int n = 0; n < rows; n++) {
      long in = src + (long) n * hw * c;
      long out = dst + (long) n * hw * c * elem;
      for (int ch = 0; ch < c; ch++) {
        long plane = out + (long) ch * hw * elem;
        if (f32) {
          plane32(in + ch, c, plane, hw, lut, ch * 256);
        } else {
          plane16(in + ch, c, plane, hw, lut, ch * 256);
        }
      }
    }
  }

  private static void plane32(long in, int stride, long out, int hw, int[] lut, int base) {
    for (int p = 0; p < hw; p++) {
      int v = lut[base + (MemoryUtil.getByte(in + (long) p * stride) & 0xff)];
      MemoryUtil.putInt(out + 4L * p, v);
    }
  }

  private static void plane16(long in, int stride, long out, int hw, int[] lut, int base) {
    for (int p = 0; p < hw; p++) {
      int v = lut[base + (MemoryUtil.getByte(in + (long) p * stride) & 0xff)];
      MemoryUtil.putShort(out + 2L * p, (short) v);
    }
  }
}
