package dev.spindle.spark.image;

/**
 * Pillow's separable resampling ({@code ImagingResample} in Pillow's {@code Resample.c}) on
 * interleaved 8-bit RGB, restricted to an output window.
 *
 * <p>Same arithmetic as Pillow: filter support scaled by the downscale factor (which is what makes
 * the bilinear filter antialias), coefficients normalised in double then rounded to fixed point
 * with {@value #PRECISION_BITS} fraction bits, accumulation from {@code 1 << 21}, clipping to 0..255
 * after each pass, horizontal pass first. Every output pixel depends only on its own coefficients,
 * so computing just the window (the crop) gives the same bytes as resizing everything and cropping.
 * Stateless; any thread may call it with its own arrays.
 */
final class PillowResample {
  static final int PRECISION_BITS = 32 - 8 - 2;
  private static final int HALF = 1 << (PRECISION_BITS - 1);

  private PillowResample() {}

  /**
   * Fixed-point coefficients of output positions {@code [first, first + count)} of a resample from
   * {@code inSize} to {@code outSize}: for output {@code i}, inputs {@code start[i]} to {@code
   * start[i] + taps[i] - 1} weighted by {@code k[i * ksize ...]}.
   */
  record Kernel(int[] start, int[] taps, int[] k, int ksize, boolean identity) {
    int firstInput() {
      return start[0];
    }

    int endInput() {
      int last = start.length - 1;
      return start[last] + taps[last];
    }
  }

  /**
   * Pillow's {@code precompute_coeffs} + {@code normalize_coeffs_8bpc}: output positions {@code
   * [first, first + count)} of resampling the box {@code [in0, in1)} of an axis of {@code inSize}
   * pixels to {@code outSize}; input indices are shifted by {@code offset} (the box's image starts
   * there in the buffer).
   */
  static Kernel kernel(ResampleFilter filter, int inSize, double in0, double in1, int outSize,
      int first, int count, int offset) {
    double scale = (in1 - in0) / outSize;
    double filterScale = Math.max(scale, 1.0);
    double support = filter.support() * filterScale;
    int ksize = (int) Math.ceil(support) * 2 + 1;
    int[] start = new int[count];
    int[] taps = new int[count];
    int[] k = new int[count * ksize];
    double[] w = new double[ksize];
    double ss = 1.0 / filterScale;
    for (int i = 0; i < count; i++) {
      double center = in0 + (first + i + 0.5) * scale;
      int xmin = Math.max((int) (center - support + 0.5), 0);
      int xmax = Math.min((int) (center + support + 0.5), inSize) - xmin;
      double ww = 0.0;
      for (int x = 0; x < xmax; x++) {
        w[x] = filter.weight((x + xmin - center + 0.5) * ss);
        ww += w[x];
      }
      for (int x = 0; x < xmax; x++) {
        double v = ww != 0.0 ? w[x] / ww : w[x];
        k[i * ksize + x] = (int) (v < 0 ? -0.5 + v * (1 << PRECISION_BITS)
            : 0.5 + v * (1 << PRECISION_BITS));
      }
      start[i] = xmin + offset;
      taps[i] = Math.max(xmax, 0);
    }
    boolean identity = in0 == 0 && in1 == inSize && inSize == outSize;
    return new Kernel(start, taps, k, ksize, identity);
  }

  /**
   * Horizontal pass: rows {@code [y0, y1)} of {@code src} (width {@code srcWidth}, 3 bytes per
   * pixel) into {@code dst} rows {@code 0 .. y1 - y0}, {@code kx.start().length} pixels wide.
   */
  static void horizontal(byte[] src, int srcWidth, int y0, int y1, Kernel kx, byte[] dst) {
    int outWidth = kx.start().length;
    int[] start = kx.start();
    int[] taps = kx.taps();
    int[] k = kx.k();
    int ksize = kx.ksize();
    for (int y = y0; y < y1; y++) {
      int row = y * srcWidth * 3;
      int o = (y - y0) * outWidth * 3;
      if (kx.identity()) {
        System.arraycopy(src, row + start[0] * 3, dst, o, outWidth * 3);
        continue;
      }
      for (int x = 0; x < outWidth; x++) {
        int s0 = HALF;
        int s1 = HALF;
        int s2 = HALF;
        int p = row + start[x] * 3;
        int kb = x * ksize;
        for (int t = 0, n = taps[x]; t < n; t++, p += 3) {
          int c = k[kb + t];
          s0 += (src[p] & 0xFF) * c;
          s1 += (src[p + 1] & 0xFF) * c;
          s2 += (src[p + 2] & 0xFF) * c;
        }
        dst[o++] = clip8(s0);
        dst[o++] = clip8(s1);
        dst[o++] = clip8(s2);
      }
    }
  }

  /**
   * Vertical pass: {@code src} holds rows starting at input row {@code srcRow0}, {@code width}
   * pixels of 3 bytes each; writes {@code ky.start().length} rows into {@code dst}.
   */
  static void vertical(byte[] src, int srcRow0, int width, Kernel ky, byte[] dst) {
    vertical(src, srcRow0, width, ky, dst, 0, width * 3);
  }

  /** As above, writing row {@code y} at {@code dst[dstOffset + y * dstStride]}. */
  static void vertical(byte[] src, int srcRow0, int width, Kernel ky, byte[] dst, int dstOffset,
      int dstStride) {
    int stride = width * 3;
    int[] start = ky.start();
    int[] taps = ky.taps();
    int[] k = ky.k();
    int ksize = ky.ksize();
    for (int y = 0; y < start.length; y++) {
      int o = dstOffset + y * dstStride;
      int base = (start[y] - srcRow0) * stride;
      if (ky.identity()) {
        System.arraycopy(src, base, dst, o, stride);
        continue;
      }
      int kb = y * ksize;
      int n = taps[y];
      for (int x = 0; x < stride; x++) {
        int s = HALF;
        int p = base + x;
        for (int t = 0; t < n; t++, p += stride) {
          s += (src[p] & 0xFF) * k[kb + t];
        }
        dst[o + x] = clip8(s);
      }
    }
  }

  static byte clip8(int v) {
    if (v >= (1 << PRECISION_BITS << 8)) {
      return (byte) 255;
    }
    if (v <= 0) {
      return 0;
    }
    return (byte) (v >> PRECISION_BITS);
  }
}
