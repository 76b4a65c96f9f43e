package dev.spindle.spark.image;

/**
 * Header parsing for JPEG (marker walk up to the frame header) and PNG (signature and IHDR); the
 * other formats' headers are read by their {@link FormatHeader}. Stateless; reads only the bytes it
 * needs.
 */
final class HeaderProbe {
  private static final int PNG_HEADER_BYTES = 8 + 8 + 13;

  private HeaderProbe() {}

  static ImageInfo probe(byte[] data, int offset, int length) throws ImageException {
    ImageFormat format = ImageFormat.sniff(data, offset, length);
    if (format == ImageFormat.JPEG) {
      return jpeg(data, offset, length);
    }
    if (format == ImageFormat.PNG) {
      return png(data, offset, length);
    }
    if (format != null) {
      return FormatHeader.read(format, data, offset, length).info();
    }
    if (length == 0) {
      throw new ImageException("Empty image: 0 bytes");
    }
    throw new ImageException(
        "Unknown image format: first bytes " + hex(data, offset, Math.min(length, 8)));
  }

  /**
   * Offset of the first start-of-scan marker of a JPEG whose header {@link #probe} accepted, or -1
   * when the data ends before it. Everything after it is entropy-coded data.
   */
  static int jpegFirstScan(byte[] data, int offset, int length) throws ImageException {
    return jpegFirstScan(data, offset, length, jpegFrameHeader(data, offset, length));
  }

  /**
   * {@link #jpegFirstScan(byte[], int, int)}, walking on from the frame header whose body is at
   * {@code frameBody} (as {@link #jpegFrameHeader} returned it) rather than from the start.
   */
  static int jpegFirstScan(byte[] data, int offset, int length, int frameBody)
      throws ImageException {
    int[] sof = {frameBody};
    return walkJpeg(data, offset, length, frameBody - 2 + u16(data, frameBody - 2), sof, true);
  }

  /**
   * Offset of the frame header's body (its sample precision byte; the marker code is 3 bytes before
   * it) of a JPEG whose header {@link #probe} accepted.
   */
  static int jpegFrameHeader(byte[] data, int offset, int length) throws ImageException {
    int[] sof = {-1};
    walkJpeg(data, offset, length, offset + 2, sof, false);
    return sof[0];
  }

  /**
   * The EXIF orientation (1..8) of a JPEG whose header {@link #probe} accepted: from the first APP1
   * "Exif" segment before the frame header; 1 when there is none.
   */
  static int jpegOrientation(byte[] data, int offset, int length) {
    int end = offset + length;
    int p = offset + 2;
    while (p + 4 <= end && (data[p] & 0xFF) == 0xFF) {
      int marker = data[p + 1] & 0xFF;
      if (marker == 0xFF) {
        p++;
        continue;
      }
      if (isFrameHeader(marker) || marker == 0xDA || marker == 0xD9 || marker == 0xD8) {
        return Orientation.NORMAL;
      }
      if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
        p += 2;
        continue;
      }
      int segment = u16(data, p + 2);
      int body = p + 4;
      int bodyEnd = Math.min(p + 2 + segment, end);
      if (marker == 0xE1
          && bodyEnd - body >= 6
          && data[body] == 'E'
          && data[body + 1] == 'x'
          && data[body + 2] == 'i'
          && data[body + 3] == 'f'
          && data[body + 4] == 0
          && data[body + 5] == 0) {
        return Orientation.fromTiff(data, body + 6, bodyEnd);
      }
      p += 2 + segment;
    }
    return Orientation.NORMAL;
  }

  private static ImageInfo jpeg(byte[] data, int offset, int length) throws ImageException {
    int p = jpegFrameHeader(data, offset, length);
    int precision = u8(data, p);
    int height = u16(data, p + 1);
    int width = u16(data, p + 3);
    int components = u8(data, p + 5);
    if (precision != 8 && precision != 12 && precision != 16) {
      throw new ImageException("Invalid JPEG sample precision: " + precision + " bits");
    }
    if (width == 0 || height == 0) {
      throw new ImageException("Invalid JPEG size: " + width + "x" + height + " (must be > 0)");
    }
    if (components != 1 && components != 3 && components != 4) {
      throw new ImageException("Unsupported JPEG component count: " + components);
    }
    return new ImageInfo(ImageFormat.JPEG, width, height, components);
  }

  /**
   * Walks JPEG marker segments from {@code p} (just after SOI, or just after the frame header with
   * its body's offset already in {@code sof[0]}, else -1 there). Stores the offset of the frame
   * header's body in {@code sof[0]}; returns at the frame header, or with {@code toScan} at the
   * first SOS (its offset).
   */
  private static int walkJpeg(byte[] data, int offset, int length, int p, int[] sof, boolean toScan)
      throws ImageException {
    int end = offset + length;
    while (true) {
      if (p >= end) {
        if (toScan && sof[0] >= 0) {
          return -1;
        }
        throw new ImageException("Truncated JPEG header: no frame header in " + length + " bytes");
      }
      if (u8(data, p) != 0xFF) {
        throw new ImageException("Garbled JPEG header: no marker at byte " + (p - offset));
      }
      while (p < end && u8(data, p) == 0xFF) {
        p++;
      }
      if (p >= end) {
        continue;
      }
      int marker = u8(data, p++);
      if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
        continue;
      }
      if (marker == 0xD8 || marker == 0xD9) {
        throw new ImageException(
            String.format("Garbled JPEG header: marker 0x%02X before the frame header", marker));
      }
      if (p + 2 > end) {
        throw new ImageException("Truncated JPEG header at byte " + (p - offset));
      }
      int segment = u16(data, p);
      if (segment < 2 || p + segment > end) {
        throw new ImageException(
            "Truncated JPEG header: segment of " + segment + " bytes at byte " + (p - offset));
      }
      if (marker == 0xDA) {
        if (sof[0] < 0) {
          throw new ImageException("Garbled JPEG header: scan before the frame header");
        }
        return p - 2;
      }
      if (isFrameHeader(marker) && sof[0] < 0) {
        if (segment < 8) {
          throw new ImageException("Truncated JPEG frame header: " + segment + " bytes");
        }
        sof[0] = p + 2;
        if (!toScan) {
          return p - 2;
        }
      }
      p += segment;
    }
  }

  private static boolean isFrameHeader(int marker) {
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
  }

  private static ImageInfo png(byte[] data, int offset, int length) throws ImageException {
    if (length < PNG_HEADER_BYTES) {
      throw new ImageException("Truncated PNG header: " + length + " bytes");
    }
    int p = offset + 8;
    if (u32(data, p) != 13
        || u8(data, p + 4) != 'I'
        || u8(data, p + 5) != 'H'
        || u8(data, p + 6) != 'D'
        || u8(data, p + 7) != 'R') {
      throw new ImageException("Garbled PNG header: first chunk is not a 13-byte IHDR");
    }
    long width = u32(data, p + 8);
    long height = u32(data, p + 12);
    int depth = u8(data, p + 16);
    int colorType = u8(data, p + 17);
    if (width == 0 || height == 0 || width > Integer.MAX_VALUE || height > Integer.MAX_VALUE) {
      throw new ImageException("Invalid PNG size: " + width + "x" + height);
    }
    int channels = pngChannels(colorType, depth);
    return new ImageInfo(ImageFormat.PNG, (int) width, (int) height, channels);
  }

  private static int pngChannels(int colorType, int depth) throws ImageException {
    boolean eightOr16 = depth == 8 || depth == 16;
    boolean upTo8 = depth == 1 || depth == 2 || depth == 4 || depth == 8;
    int channels =
        switch (colorType) {
          case 0 -> (upTo8 || depth == 16) ? 1 : -1;
          case 2 -> eightOr16 ? 3 : -1;
          case 3 -> upTo8 ? 3 : -1;
          case 4 -> eightOr16 ? 2 : -1;
          case 6 -> eightOr16 ? 4 : -1;
          default -> -1;
        };
    if (channels < 0) {
      throw new ImageException("Invalid PNG colour type " + colorType + " with bit depth " + depth);
    }
    return channels;
  }

  // the big-endian readers of every header parser in this package

  static int u8(byte[] data, int p) {
    return data[p] & 0xFF;
  }

  static int u16(byte[] data, int p) {
    return (u8(data, p) << 8) | u8(data, p + 1);
  }

  static long u32(byte[] data, int p) {
    return ((long) u16(data, p) << 16) | u16(data, p + 2);
  }

  // the little-endian readers of the BMP, TIFF, WebP and GIF parsers

  static int le16(byte[] data, int p) {
    return u8(data, p) | (u8(data, p + 1) << 8);
  }

  static long le32(byte[] data, int p) {
    return le16(data, p) | ((long) le16(data, p + 2) << 16);
  }

  private static String hex(byte[] data, int offset, int n) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      s.append(String.format("%02X", data[offset + i]));
    }
    return s.toString();
  }
}
