package dev.spindle.spark.image;

import static dev.spindle.spark.image.HeaderProbe.u32;

/**
 * A PNG's IHDR fields and the chunks before its image data, read before decoding: how much filtered
 * image data its zlib stream must inflate to, and what OpenCV's PNG decoder allocates besides its
 * RGB output. Immutable; any thread.
 */
final class PngHeader {
  /**
   * Deflate's densest code: a length/distance pair copies at most 258 bytes and costs at least 2
   * bits (two Huffman codes of at least 1 bit each), so one input byte yields at most 1032.
   */
  static final int MAX_INFLATE_RATIO = 258 * 8 / 2;

  private static final int IHDR_END = 8 + 8 + 13 + 4;
  private static final int ACTL = 0x6163544C;
  private static final int EXIF = 0x65584966;
  private static final int IDAT = 0x49444154;
  private static final int IEND = 0x49454E44;

  private final long width;
  private final long height;
  private final int depth;
  private final int samples;
  private final boolean interlaced;
  private final boolean animated;

  private PngHeader(
      long width, long height, int depth, int samples, boolean interlaced, boolean animated) {
    this.width = width;
    this.height = height;
    this.depth = depth;
    this.samples = samples;
    this.interlaced = interlaced;
    this.animated = animated;
  }

  /** The header of a PNG whose IHDR {@link HeaderProbe#probe} accepted. */
  static PngHeader parse(byte[] data, int offset, int length) {
    int p = offset + 16;
    int depth = data[p + 8] & 0xFF;
    int samples =
        switch (data[p + 9]) {
          case 2 -> 3;
          case 4 -> 2;
          case 6 -> 4;
          default -> 1; // gray, or palette indices
        };
    return new PngHeader(
        u32(data, p),
        u32(data, p + 4),
        depth,
        samples,
        data[p + 12] != 0,
        animated(data, offset + IHDR_END, offset + length));
  }

  /**
   * Whether an animation control chunk comes before the first image data: OpenCV then decodes the
   * first frame through three full-size frame buffers.
   */
  private static boolean animated(byte[] data, int start, int end) {
    long p = start;
    while (p + 8 <= end) {
      int type = (int) u32(data, (int) p + 4);
      if (type == ACTL || type == IDAT) {
        return type == ACTL;
      }
      p += 12 + u32(data, (int) p);
    }
    return false;
  }

  /**
   * The filtered image data the zlib stream inflates to: a filter byte and the packed samples of
   * each row; for an interlaced image the packed samples alone, which only lowers the bound.
   */
  long rawBytes() {
    int bitsPerPixel = samples * depth;
    if (interlaced) {
      return DecodeCost.times(width * height, bitsPerPixel) / 8;
    }
    return DecodeCost.times(height, 1 + (width * bitsPerPixel + 7) / 8);
  }

  /**
   * Refuses a PNG whose bytes after its header cannot inflate to the image it declares: every image
   * data byte is among them, and no zlib stream inflates more than {@link #MAX_INFLATE_RATIO} times
   * its size.
   */
  void checkData(int available) throws ImageException {
    long needed = (rawBytes() + MAX_INFLATE_RATIO - 1) / MAX_INFLATE_RATIO;
    if (available < needed) {
      throw new ImageException(
          String.format(
              "Corrupt PNG: header declares %dx%d (%d bytes of"
                  + " image data, compressed at least %d bytes) but only %d bytes follow it",
              width, height, rawBytes(), needed, available));
    }
  }

  /**
   * Refuses a PNG with a chunk whose declared length runs past the end of the data (or over the
   * format's 2^31 - 1): OpenCV's reader allocates a chunk's declared length before reading it, so
   * 500 bytes declaring a 3.8 GB IDAT would allocate 3.8 GB. Walks the chunk headers only, from
   * after the IHDR to IEND or the end of the data.
   */
  static void checkChunks(byte[] data, int offset, int length) throws ImageException {
    long p = IHDR_END;
    while (p + 8 <= length) {
      long size = u32(data, offset + (int) p);
      int type = (int) u32(data, offset + (int) p + 4);
      if (size > Integer.MAX_VALUE || p + 12 + size > length) {
        throw new ImageException(
            String.format(
                "Corrupt PNG: chunk '%s' at byte %d declares %d"
                    + " bytes but only %d follow its header",
                chunkName(type), p, size, Math.max(0, length - p - 8)));
      }
      if (type == IEND) {
        return;
      }
      p += 12 + size;
    }
  }

  /**
   * The EXIF orientation (1..8) of a PNG whose header {@link HeaderProbe#probe} accepted: from its
   * {@code eXIf} chunk, before or after the image data, as Pillow reads it for {@code
   * exif_transpose}; 1 when there is none, or it is unreadable (Pillow then fails, Spindle decodes
   * the image as stored). Walks the chunk headers only, to IEND or the end of the data.
   */
  static int orientation(byte[] data, int offset, int length) {
    long p = IHDR_END;
    while (p + 8 <= length) {
      long size = u32(data, offset + (int) p);
      int type = (int) u32(data, offset + (int) p + 4);
      if (type == EXIF) {
        int body = offset + (int) p + 8;
        return Orientation.fromTiff(data, body, (int) Math.min(offset + length, body + size));
      }
      if (type == IEND) {
        break;
      }
      p += 12 + size;
    }
    return Orientation.NORMAL;
  }

  private static String chunkName(int type) {
    StringBuilder s = new StringBuilder(4);
    for (int shift = 24; shift >= 0; shift -= 8) {
      int c = (type >>> shift) & 0xFF;
      s.append(c >= 0x20 && c < 0x7F ? (char) c : '?');
    }
    return s.toString();
  }

  /** Bytes after the IHDR chunk. */
  static int dataAfterHeader(int length) {
    return Math.max(0, length - IHDR_END);
  }

  /**
   * What OpenCV's PNG decoder allocates besides its RGB output: a row pointer per row, libpng's two
   * rows (at most 8 bytes a pixel), and for an animated PNG three frames of up to 4 channels of 16
   * bits. Chunks it copies are at most the encoded length, counted by the caller.
   */
  long decoderBytes() {
    long frames = animated ? DecodeCost.times(width * height, 12 * (depth == 16 ? 2 : 1)) : 0;
    return DecodeCost.plus(8 * height + 2 * (8 * width + 1), frames);
  }
}
