package dev.spindle.spark.image;

import java.nio.ByteBuffer;

/**
 * Whether a decoded JPEG ends the way libjpeg-turbo ends an image whose data ran out: every block
 * it decoded from no data has zero coefficients, Y = Cb = Cr = 128, so the image's last block is
 * flat mid-grey (the luma {@code 0.299 R + 0.587 G + 0.114 B} of each pixel within half a step of
 * 128 even where upsampling blends in a neighbour's colour; for CMYK, one neutral grey). Looks at
 * the bottom-right block only, at most 64 pixels, so it costs nanoseconds: true for every
 * sequential JPEG that lost its last MCU, rarely for anything else; the caller then reads the scans
 * ({@link JpegScanCheck}) to be sure. Stateless; any thread.
 */
final class GreyTail {
  private static final int MID_GREY = 128_000;

  /** Luma times 1000, so a tolerance of one step covers the rounding of the colour conversion. */
  private static final int TOLERANCE = 1_000;

  private GreyTail() {}

  /**
   * Whether the last block of {@code rgb} ({@code width x height} RGB bytes from position 0,
   * decoded at {@code 1 / reduce} scale from a JPEG of {@code channels} components) is grey.
   */
  static boolean suspect(ByteBuffer rgb, int width, int height, int reduce, int channels) {
    int block = 8 / reduce;
    int x0 = (width - 1) / block * block;
    int y0 = (height - 1) / block * block;
    int first = ((height - 1) * width + width - 1) * 3;
    for (int y = y0; y < height; y++) {
      for (int i = (y * width + x0) * 3; i < (y * width + width) * 3; i += 3) {
        if (!grey(rgb, i, first, channels)) {
          return false;
        }
      }
    }
    return true;
  }

  private static boolean grey(ByteBuffer rgb, int i, int corner, int channels) {
    int r = rgb.get(i) & 0xFF;
    int g = rgb.get(i + 1) & 0xFF;
    int b = rgb.get(i + 2) & 0xFF;
    if (channels == 4) {
      return r == g && g == b && r == (rgb.get(corner) & 0xFF);
    }
    return Math.abs(299 * r + 587 * g + 114 * b - MID_GREY) <= TOLERANCE;
  }
}
