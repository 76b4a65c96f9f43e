package dev.spindle.spark.image;

import static dev.spindle.spark.image.HeaderProbe.le16;
import static dev.spindle.spark.image.HeaderProbe.le32;
import static dev.spindle.spark.image.HeaderProbe.u8;

/**
 * A WebP's RIFF container and first chunk: {@code VP8 } (lossy: the key frame's 14-bit width and
 * height), {@code VP8L} (lossless) or {@code VP8X} (extended: canvas size, alpha and animation
 * flags, and an {@code EXIF} chunk, whose orientation Pillow's {@code exif_transpose} applies). An
 * animated WebP decodes to its first frame on the canvas, as Pillow's {@code Image.open} gives it
 * (both through libwebp's {@code WebPAnimDecoder}); alpha is dropped. Immutable; any thread.
 */
final class WebpHeader implements FormatHeader {
  private static final int ANIMATION = 0x02;
  private static final int ALPHA = 0x10;

  private final ImageInfo info;
  private final boolean lossless;
  private final boolean animated;
  private final int orientation;
  private final long riff;

  private WebpHeader(
      ImageInfo info, boolean lossless, boolean animated, int orientation, long riff) {
    this.info = info;
    this.lossless = lossless;
    this.animated = animated;
    this.orientation = orientation;
    this.riff = riff;
  }

  static WebpHeader read(byte[] data, int offset, int length) throws ImageException {
    long riff = le32(data, offset + 4) + 8;
    int end = (int) Math.min(offset + (long) length, offset + riff);
    int p = offset + 12;
    if (p + 8 > end) {
      throw new ImageException("Truncated WebP header: no chunk in " + (end - offset) + " bytes");
    }
    String type = fourCc(data, p);
    int size = (int) Math.min(le32(data, p + 4), end - p - 8);
    return switch (type) {
      case "VP8 " -> lossy(data, p + 8, size, riff);
      case "VP8L" -> lossless(data, p + 8, size, riff);
      case "VP8X" -> extended(data, p + 8, size, end, riff);
      default ->
          throw new ImageException(
              "Garbled WebP header: first chunk '" + type + "' (VP8, VP8L or VP8X)");
    };
  }

  /** Refuses a WebP whose RIFF header declares more bytes than are present. */
  @Override
  public void checkData(byte[] data, int offset, int length) throws ImageException {
    if (riff > length) {
      throw new ImageException(
          "Truncated WebP: its RIFF header declares "
              + riff
              + " bytes but only "
              + length
              + " are present");
    }
  }

  private static WebpHeader lossy(byte[] data, int p, int size, long riff) throws ImageException {
    if (size < 10) {
      throw new ImageException("Truncated WebP header: VP8 chunk of " + size + " bytes");
    }
    int tag = u8(data, p) | u8(data, p + 1) << 8 | u8(data, p + 2) << 16;
    if ((tag & 1) != 0
        || u8(data, p + 3) != 0x9D
        || u8(data, p + 4) != 0x01
        || u8(data, p + 5) != 0x2A) {
      throw new ImageException("Garbled WebP header: its VP8 data does not start a key frame");
    }
    ImageInfo info = info(le16(data, p + 6) & 0x3FFF, le16(data, p + 8) & 0x3FFF, 3);
    return new WebpHeader(info, false, false, Orientation.NORMAL, riff);
  }

  private static WebpHeader lossless(byte[] data, int p, int size, long riff)
      throws ImageException {
    if (size < 5) {
      throw new ImageException("Truncated WebP header: VP8L chunk of " + size + " bytes");
    }
    long bits = le32(data, p + 1);
    if (u8(data, p) != 0x2F || bits >>> 29 != 0) {
      throw new ImageException("Garbled WebP header: its VP8L signature or version is wrong");
    }
    int width = (int) (bits & 0x3FFF) + 1;
    int height = (int) (bits >>> 14 & 0x3FFF) + 1;
    return new WebpHeader(
        info(width, height, (bits >>> 28 & 1) != 0 ? 4 : 3), true, false, Orientation.NORMAL, riff);
  }

  private static WebpHeader extended(byte[] data, int p, int size, int end, long riff)
      throws ImageException {
    if (size < 10) {
      throw new ImageException("Truncated WebP header: VP8X chunk of " + size + " bytes");
    }
    int flags = u8(data, p);
    long width = (le16(data, p + 4) | (long) u8(data, p + 6) << 16) + 1;
    long height = (le16(data, p + 7) | (long) u8(data, p + 9) << 16) + 1;
    if (width * height > 0xFFFFFFFFL) {
      throw new ImageException("Invalid WebP size: " + width + "x" + height);
    }
    boolean lossless = false;
    int orientation = Orientation.NORMAL;
    int q = p + size + (size & 1);
    while (q + 8 <= end) { // the chunks after VP8X: the image's, EXIF, ...
      String type = fourCc(data, q);
      long n = le32(data, q + 4);
      int body = q + 8;
      int bodyEnd = (int) Math.min(end, body + n);
      if (type.equals("VP8L")) {
        lossless = true;
      } else if (type.equals("EXIF") && orientation == Orientation.NORMAL) {
        orientation = exifOrientation(data, body, bodyEnd);
      }
      q = (int) Math.min(end, body + n + (n & 1));
    }
    int channels = (flags & ALPHA) != 0 ? 4 : 3;
    return new WebpHeader(
        info(width, height, channels), lossless, (flags & ANIMATION) != 0, orientation, riff);
  }

  /** Pillow takes the EXIF chunk whole; {@code Exif.load} drops a leading "Exif\0\0". */
  private static int exifOrientation(byte[] data, int p, int end) {
    if (end - p >= 6
        && data[p] == 'E'
        && data[p + 1] == 'x'
        && data[p + 2] == 'i'
        && data[p + 3] == 'f'
        && data[p + 4] == 0
        && data[p + 5] == 0) {
      p += 6;
    }
    return Orientation.fromTiff(data, p, end);
  }

  private static ImageInfo info(long width, long height, int channels) throws ImageException {
    if (width == 0 || height == 0) {
      throw new ImageException("Invalid WebP size: " + width + "x" + height);
    }
    return new ImageInfo(ImageFormat.WEBP, (int) width, (int) height, channels);
  }

  private static String fourCc(byte[] data, int p) {
    char[] c = new char[4];
    for (int i = 0; i < 4; i++) {
      int b = u8(data, p + i);
      c[i] = b >= 0x20 && b < 0x7F ? (char) b : '?';
    }
    return new String(c);
  }

  @Override
  public ImageInfo info() {
    return info;
  }

  @Override
  public int orientation() {
    return orientation;
  }

  /**
   * libwebp's buffers: 2 KiB of row caches a 16-pixel column and 1 MiB of tables; a lossless
   * image's ARGB pixels (4 bytes a pixel); with alpha, OpenCV's RGBA output before it drops alpha
   * (4) and the alpha plane (1); an animation's canvas, its previous canvas, the frame's own pixels
   * and OpenCV's unused RGBA buffer (16).
   */
  @Override
  public long decoderBytes() {
    long perPixel = animated ? 16 : (lossless ? 4 : 0) + (info.channels() == 4 ? 5 : 0);
    long rows = 2048L * ((info.width() + 15) / 16) + (1 << 20);
    return DecodeCost.plus(rows, DecodeCost.times(info.pixels(), perPixel));
  }
}
