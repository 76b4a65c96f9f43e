package dev.spindle.spark.image;

/**
 * EXIF orientation (tag 0x0112, values 1..8): reading it from a JPEG's APP1 segment and applying it
 * to decoded pixels the way Pillow's {@code ImageOps.exif_transpose} does. Stateless.
 */
final class Orientation {
  static final int NORMAL = 1;

  private Orientation() {}

  /** Whether orientation {@code o} swaps width and height (the transposing ones, 5 to 8). */
  static boolean swapsAxes(int o) {
    return o >= 5 && o <= 8;
  }

  /**
   * Writes {@code image} turned upright per orientation {@code o} into {@code out} and returns it
   * as a new image over {@code out}.
   */
  static DecodedImage apply(DecodedImage image, int o, byte[] out) {
    int w = image.width();
    int h = image.height();
    int ow = swapsAxes(o) ? h : w;
    int oh = swapsAxes(o) ? w : h;
    byte[] in = image.pixels();
    for (int y = 0; y < oh; y++) {
      for (int x = 0; x < ow; x++) {
        int sx;
        int sy;
        switch (o) {
          case 2 -> {
            sx = w - 1 - x;
            sy = y;
          }
          case 3 -> {
            sx = w - 1 - x;
            sy = h - 1 - y;
          }
          case 4 -> {
            sx = x;
            sy = h - 1 - y;
          }
          case 5 -> {
            sx = y;
            sy = x;
          }
          case 6 -> {
            sx = y;
            sy = h - 1 - x;
          }
          case 7 -> {
            sx = w - 1 - y;
            sy = h - 1 - x;
          }
          case 8 -> {
            sx = w - 1 - y;
            sy = x;
          }
          default -> {
            sx = x;
            sy = y;
          }
        }
        int s = (sy * w + sx) * 3;
        int d = (y * ow + x) * 3;
        out[d] = in[s];
        out[d + 1] = in[s + 1];
        out[d + 2] = in[s + 2];
      }
    }
    return new DecodedImage(out, ow, oh);
  }

  /**
   * The orientation in a TIFF structure (an EXIF APP1 body after "Exif\0\0") at {@code data[tiff,
   * end)}, or {@link #NORMAL} when absent or unreadable: a broken EXIF block never makes an image
   * unreadable.
   */
  static int fromTiff(byte[] data, int tiff, int end) {
    if (end - tiff < 8) {
      return NORMAL;
    }
    boolean little = data[tiff] == 'I' && data[tiff + 1] == 'I';
    if (!little && !(data[tiff] == 'M' && data[tiff + 1] == 'M')) {
      return NORMAL;
    }
    long ifd = u32(data, tiff + 4, little);
    if (ifd < 8 || tiff + ifd + 2 > end) {
      return NORMAL;
    }
    int p = (int) (tiff + ifd);
    int entries = u16(data, p, little);
    for (int i = 0; i < entries; i++) {
      int e = p + 2 + i * 12;
      if (e + 12 > end) {
        return NORMAL;
      }
      if (u16(data, e, little) == 0x0112 && u16(data, e + 2, little) == 3) {
        int v = u16(data, e + 8, little);
        return v >= 1 && v <= 8 ? v : NORMAL;
      }
    }
    return NORMAL;
  }

  private static int u16(byte[] d, int p, boolean little) {
    int a = d[p] & 0xFF;
    int b = d[p + 1] & 0xFF;
    return little ? (b << 8) | a : (a << 8) | b;
  }

  private static long u32(byte[] d, int p, boolean little) {
    long a = u16(d, p, little);
    long b = u16(d, p + 2, little);
    return little ? (b << 16) | a : (a << 16) | b;
  }
}
