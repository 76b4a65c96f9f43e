package dev.spindle.spark.image;

/** An encoded image format Spindle decodes, recognised by its magic bytes (never by file name). */
public enum ImageFormat {
  JPEG,
  PNG;

  private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

  /**
   * The format whose magic number {@code data[offset, offset + length)} starts with, as the
   * decoders take it ({@link ImageInfo#probe} dispatches on this): JPEG's SOI marker {@code FF D8}
   * (bytes that go on with anything but a marker are a garbled JPEG, not an unknown format), PNG's
   * 8-byte signature; null for any other bytes. Looks at those bytes only, not at the header behind
   * them. Any thread.
   */
  public static ImageFormat sniff(byte[] data, int offset, int length) {
    if (length >= 2 && (data[offset] & 0xFF) == 0xFF && (data[offset + 1] & 0xFF) == 0xD8) {
      return JPEG;
    }
    if (length < PNG_SIGNATURE.length) {
      return null;
    }
    for (int i = 0; i < PNG_SIGNATURE.length; i++) {
      if (data[offset + i] != PNG_SIGNATURE[i]) {
        return null;
      }
    }
    return PNG;
  }
}
