package dev.spindle.spark.image;

/**
 * Pillow's separable resampling ({@code ImagingResample} in Pillow's {@code Resample.c}) on
 * interleaved 8-bit RGB, restricted to an output window.
 *
 * <p>Same arithmetic as Pillow: filter support scaled by the downscale factor (which is what makes
 * the bilinear filter antialias), coefficients normalised in double then rounded to fixed point
 * with {@value #PRECISION_BITS} fraction bits, accumulation from {@code 1 << 21}, clipping to
 * 0..255 after each pass, horizontal pass first. Every output pixel depends only on its own
 * coefficients, so computing just the window (the crop) gives the same bytes as resizing everything
 * and cropping. Stateless; any thread may call it with its own arrays.
 */
final class PillowResample {
  static final int PRECISION_BITS = 32 - 8 - 2;
  private static final int HALF = 1 << (PRECISION_BITS - 1);

  private PillowResample() {}

  /**
   * Fixed-point coefficients of output positions {@code [first, first + count)} of a resample from
   * {@code inSize} to {@code outSize}: for output {@code i}, inputs {@code start[i]} to {@code
   * start[i] + taps[i] - 1} weighted by {@code k[i * ksize ...]}. Immutable once built (the arrays
   * are not to be modified); remembers its last {@link #padded} form.
   */
  static final class Kernel {
    private final int[] start;
    private final int[] taps;
    private final int[] k;
    private final int ksize;
    private volatile Padded padded;

    Kernel(int[] start, int[] taps, int[] k, int ksize) {
      this.start = start;
      this.taps = taps;
      this.k = k;
      this.ksize = ksize;
    }

    int[] start() {
      return start;
    }

    int[] taps() {
      return taps;
    }

    int[] k() {
      return k;
    }

    int ksize() {
      return ksize;
    }

    int firstInput() {
      return start[0];
    }

    int endInput() {
      int last = start.length - 1;
      return start[last] + taps[last];
    }

    /**
     * This kernel with the same taps count everywhere (the most any output uses, at least 4 for the
     * unrolled loop), windows inside {@code [0, limit)}.
     */
    Padded padded(int limit) {
      Padded p = padded;
      if (p == null || p.limit() != limit) {
        p = pad(limit);
        padded = p;
      }
      return p;
    }

    private Padded pad(int limit) {
      int most = 1;
      for (int t : taps) {
        most = Math.max(most, t);
      }
      int n = Math.min(most <= 4 ? 4 : most, limit);
      int[] s = new int[start.length];
      int[] kk = new int[start.length * n];
      int first = Integer.MAX_VALUE;
      int end = 0;
      for (int i = 0; i < start.length; i++) {
        int from = Math.max(0, Math.min(start[i], limit - n));
        for (int t = 0; t < taps[i]; t++) {
          kk[i * n + start[i] - from + t] = k[i * ksize + t];
        }
        s[i] = from;
        first = Math.min(first, from);
        end = Math.max(end, from + n);
      }
      return new Padded(s, kk, n, first, end, limit);
    }
  }

  /**
   * Pillow's {@code precompute_coeffs} + {@code normalize_coeffs_8bpc}: output positions {@code
   * [first, first + count)} of resampling the box {@code [in0, in1)} of an axis of {@code inSize}
   * pixels to {@code outSize}; input indices are shifted by {@code offset} (the box's image starts
   * there in the buffer).
   */
  static Kernel kernel(
      ResampleFilter filter,
      int inSize,
      double in0,
      double in1,
      int outSize,
      int first,
      int count,
      int offset) {
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
        k[i * ksize + x] =
            (int) (v < 0 ? -0.5 + v * (1 << PRECISION_BITS) : 0.5 + v * (1 << PRECISION_BITS));
      }
      start[i] = xmin + offset;
      taps[i] = Math.max(xmax, 0);
    }
    return new Kernel(start, taps, k, ksize);
  }

  /**
   * Horizontal pass: rows {@code [y0, y1)} of {@code src} (width {@code srcWidth}, 3 bytes per
   * pixel) into {@code dst} rows {@code 0 .. y1 - y0} of clipped values 0..255, {@code
   * kx.start().length} pixels wide. {@code row} is scratch of at least {@code srcWidth * 3}.
   */
  static void horizontal(
      byte[] src, int srcWidth, int y0, int y1, Kernel kx, int[] dst, int[] row) {
    int outWidth = kx.start().length;
    Padded pad = kx.padded(srcWidth);
    int first = pad.first();
    int span = (pad.end() - first) * 3;
    int taps = pad.taps();
    int[] start = pad.start();
    int[] k = pad.k();
    for (int y = y0; y < y1; y++) {
      int base = (y * srcWidth + first) * 3;
      for (int i = 0; i < span; i++) {
        row[i] = src[base + i] & 0xFF;
      }
      int o = (y - y0) * outWidth * 3;
      if (taps == 4) {
        horizontalRow4(row, first, start, k, outWidth, dst, o);
        continue;
      }
      for (int x = 0; x < outWidth; x++) {
        int s0 = HALF;
        int s1 = HALF;
        int s2 = HALF;
        int p = (start[x] - first) * 3;
        for (int t = 0, kb = x * taps; t < taps; t++, p += 3) {
          int c = k[kb + t];
          s0 += row[p] * c;
          s1 += row[p + 1] * c;
          s2 += row[p + 2] * c;
        }
        dst[o] = clip(s0);
        dst[o + 1] = clip(s1);
        dst[o + 2] = clip(s2);
        o += 3;
      }
    }
  }

  /** One row of the horizontal pass with exactly 4 taps per output, unrolled. */
  private static void horizontalRow4(
      int[] row, int first, int[] start, int[] k, int outWidth, int[] dst, int o) {
    for (int x = 0; x < outWidth; x++) {
      int p = (start[x] - first) * 3;
      int kb = x * 4;
      int c0 = k[kb];
      int c1 = k[kb + 1];
      int c2 = k[kb + 2];
      int c3 = k[kb + 3];
      int r0 = row[p];
      int g0 = row[p + 1];
      int b0 = row[p + 2];
      int r1 = row[p + 3];
      int g1 = row[p + 4];
      int b1 = row[p + 5];
      int r2 = row[p + 6];
      int g2 = row[p + 7];
      int b2 = row[p + 8];
      int r3 = row[p + 9];
      int g3 = row[p + 10];
      int b3 = row[p + 11];
      dst[o] = clip(HALF + r0 * c0 + r1 * c1 + r2 * c2 + r3 * c3);
      dst[o + 1] = clip(HALF + g0 * c0 + g1 * c1 + g2 * c2 + g3 * c3);
      dst[o + 2] = clip(HALF + b0 * c0 + b1 * c1 + b2 * c2 + b3 * c3);
      o += 3;
    }
  }

  /**
   * Vertical pass: {@code src} holds clipped rows starting at input row {@code srcRow0}, {@code
   * width} pixels of 3 values each; writes {@code ky.start().length} rows of bytes, row {@code y}
   * at {@code dst[dstOffset + y * dstStride]}. {@code acc} is scratch of at least {@code width *
   * 3}. Loops run along rows so the JIT can vectorise them.
   */
  static void vertical(
      int[] src,
      int srcRow0,
      int width,
      Kernel ky,
      byte[] dst,
      int dstOffset,
      int dstStride,
      int[] acc) {
    int stride = width * 3;
    int[] start = ky.start();
    int[] taps = ky.taps();
    int[] k = ky.k();
    int ksize = ky.ksize();
    for (int y = 0; y < start.length; y++) {
      java.util.Arrays.fill(acc, 0, stride, HALF);
      for (int t = 0, n = taps[y]; t < n; t++) {
        int c = k[y * ksize + t];
        int base = (start[y] + t - srcRow0) * stride;
        for (int i = 0; i < stride; i++) {
          acc[i] += src[base + i] * c;
        }
      }
      int o = dstOffset + y * dstStride;
      for (int i = 0; i < stride; i++) {
        dst[o + i] = (byte) clip(acc[i]);
      }
    }
  }

  /**
   * Pillow's {@code clip8}: the accumulated fixed-point value rounded down to 0..255 (the rounding
   * half was added up front).
   */
  static int clip(int v) {
    return Math.min(255, Math.max(0, v >> PRECISION_BITS));
  }

  /**
   * A kernel with the same taps count for every output ({@code taps}), windows moved inside {@code
   * [0, limit)} and zero weights where a window was shorter: the same sums, simpler loops.
   */
  record Padded(int[] start, int[] k, int taps, int first, int end, int limit) {}
}
