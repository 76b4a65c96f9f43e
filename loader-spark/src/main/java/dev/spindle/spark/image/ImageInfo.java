package dev.spindle.spark.image;

/**
 * What an encoded image's header declares: format, width, height and channel count.
 *
 * <p>{@link #probe} reads the header only: it never decodes pixels and allocates nothing
 * proportional to the image, so a hostile 100000×100000 header costs microseconds. Any thread may
 * call it. {@code channels} is the count the file stores (JPEG: 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK;
 * PNG: 1 gray, 2 gray+alpha, 3 RGB or palette, 4 RGBA; BMP: 3, 4 with an alpha mask; PNM: 1 for PBM
 * and PGM, 3 for PPM; TIFF: its samples a pixel, 3 for a palette; WebP: 3, 4 with alpha; GIF: 3),
 * not what the transform outputs. {@code width} and {@code height} are as stored: a TIFF whose
 * orientation turns it decodes to the other way round.
 *
 * @param format the encoded format
 * @param width declared width in pixels, at least 1
 * @param height declared height in pixels, at least 1
 * @param channels stored channels, 1 to 4
 */
record ImageInfo(ImageFormat format, int width, int height, int channels) {

  public ImageInfo {
    if (format == null) {
      throw new IllegalArgumentException("Invalid image format: null");
    }
    if (width <= 0 || height <= 0) {
      throw new IllegalArgumentException(
          "Invalid image size: " + width + "x" + height + " (must be > 0)");
    }
    if (channels < 1 || channels > 4) {
      throw new IllegalArgumentException("Invalid channel count: " + channels + " (must be 1..4)");
    }
  }

  /** Declared pixel count, {@code width * height}, without overflow. */
  public long pixels() {
    return (long) width * height;
  }

  /**
   * Reads the header of {@code data[offset, offset + length)}.
   *
   * @throws ImageException for an unknown format, a truncated or garbled header, or zero dimensions
   */
  public static ImageInfo probe(byte[] data, int offset, int length) throws ImageException {
    if (data == null || offset < 0 || length < 0 || offset > data.length - length) {
      throw new IllegalArgumentException(
          "Invalid range: offset "
              + offset
              + ", length "
              + length
              + " in "
              + (data == null ? "null" : data.length + " bytes"));
    }
    return HeaderProbe.probe(data, offset, length);
  }
}
