package dev.spindle.gpu.device;

import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The CPU twin of the CUDA kernel {@code spindle_normalize_*}: uint8 HWC to CHW float32/float16
 * with one fused multiply-add per element, so both paths round identically. Stateless; any
 * thread.
 */
public final class HostNormalizer {
  private HostNormalizer() {}

  /**
   * Normalises {@code rows} images from native address {@code src} to native address {@code dst}.
   *
   * @param table {@link NormalizeSpec#table()}
   */
  public static void normalize(long src, long dst, int rows, NormalizeSpec spec, float[] table) {
    int c = spec.channels();
    int hw = spec.pixels();
    int elem = spec.type().bytes();
    for (int n = 0; n < rows; n++) {
      long in = src + (long) n * hw * c;
      long out = dst + (long) n * hw * c * elem;
      for (int ch = 0; ch < c; ch++) {
        long plane = out + (long) ch * hw * elem;
        float scale = table[ch];
        float bias = table[c + ch];
        if (spec.type() == ElementType.FLOAT32) {
          plane32(in + ch, c, plane, hw, scale, bias);
        } else if (spec.type() == ElementType.FLOAT16) {
          plane16(in + ch, c, plane, hw, scale, bias);
        } else {
          throw new IllegalArgumentException("Invalid element type for normalisation: "
              + spec.type() + " (must be FLOAT16 or FLOAT32)");
        }
      }
    }
  }

  private static void plane32(long in, int stride, long out, int hw, float scale, float bias) {
    for (int p = 0; p < hw; p++) {
      float x = MemoryUtil.getByte(in + (long) p * stride) & 0xff;
      MemoryUtil.putInt(out + 4L * p, Float.floatToRawIntBits(Math.fma(x, scale, bias)));
    }
  }

  private static void plane16(long in, int stride, long out, int hw, float scale, float bias) {
    for (int p = 0; p < hw; p++) {
      float x = MemoryUtil.getByte(in + (long) p * stride) & 0xff;
      MemoryUtil.putShort(out + 2L * p, Half.fromFloat(Math.fma(x, scale, bias)));
    }
  }
}
