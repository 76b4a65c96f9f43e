package dev.spindle.spark.image;

/**
 * An encoded image format Spindle decodes, recognised by its magic bytes (never by file name):
 * torchvision's {@code ImageFolder} extensions ({@code .jpg .jpeg .png .ppm .bmp .pgm .tif .tiff
 * .webp}) and GIF.
 */
public enum ImageFormat {
  JPEG,
  PNG,
  /** Windows and OS/2 bitmaps: 1, 4, 8, 16, 24 and 32 bits a pixel, RLE4 and RLE8. */
  BMP,
  /** Netpbm's PBM, PGM and PPM ({@code P1} to {@code P6}), plain and raw. */
  PNM,
  /** TIFF (classic, not BigTIFF): its first image. */
  TIFF,
  /** WebP, lossy or lossless, still or animated (its first frame). */
  WEBP,
  /** GIF: its first frame. */
  GIF;

  private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

  /**
   * The format whose magic number {@code data[offset, offset + length)} starts with, as the
   * decoders take it ({@link ImageInfo#probe} dispatches on this): JPEG's SOI marker {@code FF D8}
   * (bytes that go on with anything but a marker are a garbled JPEG, not an unknown format), PNG's
   * 8-byte signature, BMP's {@code BM}, PNM's {@code P1} to {@code P6} and a whitespace, TIFF's
   * {@code II*\0} or {@code MM\0*} (and BigTIFF's {@code +}), WebP's {@code RIFF....WEBP}, GIF's
   * {@code GIF87a} or {@code GIF89a}; null for any other bytes. Looks at those bytes only, not at
   * the header behind them. Any thread.
   */
  public static ImageFormat sniff(byte[] data, int offset, int length) {
    if (length >= 2 && (data[offset] & 0xFF) == 0xFF && (data[offset + 1] & 0xFF) == 0xD8) {
      return JPEG;
    }
    if (startsWith(data, offset, length, PNG_SIGNATURE)) {
      return PNG;
    }
    if (length >= 2 && data[offset] == 'B' && data[offset + 1] == 'M') {
      return BMP;
    }
    if (length >= 3
        && data[offset] == 'P'
        && data[offset + 1] >= '1'
        && data[offset + 1] <= '6'
        && PnmHeader.whitespace(data[offset + 2])) {
      return PNM;
    }
    if (length >= 4 && tiff(data, offset)) {
      return TIFF;
    }
    if (length >= 12
        && startsWith(data, offset, 4, "RIFF")
        && startsWith(data, offset + 8, 4, "WEBP")) {
      return WEBP;
    }
    if (startsWith(data, offset, length, "GIF87a") || startsWith(data, offset, length, "GIF89a")) {
      return GIF;
    }
    return null;
  }

  /** {@code II} + 42 or 43 little-endian, {@code MM} + 42 or 43 big-endian. */
  private static boolean tiff(byte[] data, int offset) {
    int a = data[offset] & 0xFF;
    int b = data[offset + 1] & 0xFF;
    int c = data[offset + 2] & 0xFF;
    int d = data[offset + 3] & 0xFF;
    if (a == 'I' && b == 'I') {
      return (c == 42 || c == 43) && d == 0;
    }
    return a == 'M' && b == 'M' && c == 0 && (d == 42 || d == 43);
  }

  private static boolean startsWith(byte[] data, int offset, int length, byte[] magic) {
    if (length < magic.length) {
      return false;
    }
    for (int i = 0; i < magic.length; i++) {
      if (data[offset + i] != magic[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean startsWith(byte[] data, int offset, int length, String magic) {
    return startsWith(
        data, offset, length, magic.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }
}
