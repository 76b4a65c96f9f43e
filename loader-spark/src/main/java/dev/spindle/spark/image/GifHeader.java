package dev.spindle.spark.image;

import static dev.spindle.spark.image.HeaderProbe.le16;
import static dev.spindle.spark.image.HeaderProbe.u8;

/**
 * A GIF's logical screen and the blocks up to its first image: the image's place, its colour table
 * and transparent colour. Spindle decodes a GIF's first frame, as Pillow's {@code Image.open} gives
 * it: the frame's pixels through its colour table, the rest of the screen (and its transparent
 * pixels) in its transparent colour, else its first colour ({@link RgbConversion#gif}). Immutable;
 * any thread.
 *
 * <p>Refused by name: a GIF without a colour table (Pillow reads its indices as gray levels, OpenCV
 * as a palette of its own), a first image outside the screen (Pillow grows the screen, OpenCV
 * refuses), more than one graphic control extension before it, a background or transparent colour
 * outside the colour table, a minimum LZW code size outside 2 to 8, and ({@link #checkData}) data
 * too short for the first image.
 */
final class GifHeader implements FormatHeader {
  /** A GIF LZW code of at least 3 bits yields at most 4096 pixels. */
  private static final long PIXELS_PER_BYTE = 4096 * 8 / 3;

  /** OpenCV's LZW table: 4097 entries, each holding its whole string, at most 4096 bytes. */
  private static final long LZW_TABLE_BYTES = 4097L * 4096 / 2 + 4097L * 32;

  private final ImageInfo info;
  private final int[] frame;
  private final int fill;
  private final int lzwAt;

  /** {@code lzwAt}: where the first image's LZW sub-blocks start, from the start of the GIF. */
  private GifHeader(ImageInfo info, int[] frame, int fill, int lzwAt) {
    this.info = info;
    this.frame = frame;
    this.fill = fill;
    this.lzwAt = lzwAt;
  }

  static GifHeader read(byte[] data, int offset, int length) throws ImageException {
    if (length < 13) {
      throw new ImageException("Truncated GIF header: " + length + " bytes");
    }
    int width = le16(data, offset + 6);
    int height = le16(data, offset + 8);
    if (width == 0 || height == 0) {
      throw new ImageException("Invalid GIF size: " + width + "x" + height);
    }
    int flags = u8(data, offset + 10);
    int background = u8(data, offset + 11);
    int globalColours = (flags & 0x80) != 0 ? 2 << (flags & 7) : 0;
    int end = offset + length;
    int p = offset + 13;
    need(p + 3 * globalColours, end, "its global colour table");
    if (globalColours > 0 && background >= globalColours) {
      throw new ImageException(
          "Garbled GIF header: background colour "
              + background
              + " outside its "
              + globalColours
              + "-colour table");
    }
    int globalTable = p;
    p += 3 * globalColours;
    int transparent = -1;
    int controls = 0;
    while (true) {
      need(p + 1, end, "an image");
      int block = u8(data, p);
      if (block == 0x2C) {
        break;
      }
      if (block == 0x3B) {
        throw new ImageException("Garbled GIF: its trailer comes before any image");
      }
      if (block != 0x21) {
        throw new ImageException(
            String.format("Garbled GIF header: block 0x%02X at byte %d", block, p - offset));
      }
      need(p + 3, end, "an extension");
      if (u8(data, p + 1) == 0xF9) {
        controls++;
        need(p + 8, end, "its graphic control extension");
        if (u8(data, p + 2) != 4 || (u8(data, p + 3) >> 2 & 7) > 3) {
          throw new ImageException(
              "Garbled GIF header: graphic control extension at byte " + (p - offset));
        }
        transparent = (u8(data, p + 3) & 1) != 0 ? u8(data, p + 6) : -1;
      }
      p = skipSubBlocks(data, p + 2, end);
    }
    if (controls > 1) {
      throw new ImageException(
          "Garbled GIF: " + controls + " graphic control extensions before its first image");
    }
    return image(data, offset, p, end, width, height, globalTable, globalColours, transparent);
  }

  private static GifHeader image(
      byte[] data,
      int offset,
      int p,
      int end,
      int width,
      int height,
      int globalTable,
      int globalColours,
      int transparent)
      throws ImageException {
    need(p + 10, end, "its image descriptor");
    int left = le16(data, p + 1);
    int top = le16(data, p + 3);
    int w = le16(data, p + 5);
    int h = le16(data, p + 7);
    int flags = u8(data, p + 9);
    if (w == 0 || h == 0 || left + w > width || top + h > height) {
      throw new ImageException(
          String.format(
              "Unsupported GIF: its first image (%dx%d at %d,%d) is not inside its %dx%d screen",
              w, h, left, top, width, height));
    }
    int localColours = (flags & 0x80) != 0 ? 2 << (flags & 7) : 0;
    int table = localColours > 0 ? p + 10 : globalTable;
    int colours = localColours > 0 ? localColours : globalColours;
    p += 10 + 3 * localColours;
    need(p + 1, end, "its image data");
    if (colours == 0) {
      throw new ImageException(
          "Unsupported GIF without a colour table (Pillow reads its indices as gray levels,"
              + " OpenCV as a palette of its own)");
    }
    int codeSize = u8(data, p);
    if (codeSize < 2 || codeSize > 8) {
      throw new ImageException("Garbled GIF: minimum LZW code size " + codeSize + " (2 to 8)");
    }
    int fillIndex = Math.max(transparent, 0);
    if (fillIndex >= colours) {
      throw new ImageException(
          "Garbled GIF: transparent colour "
              + fillIndex
              + " outside its "
              + colours
              + "-colour table");
    }
    int c = table + 3 * fillIndex;
    int fill = u8(data, c) << 16 | u8(data, c + 1) << 8 | u8(data, c + 2);
    ImageInfo info = new ImageInfo(ImageFormat.GIF, width, height, 3);
    return new GifHeader(info, new int[] {left, top, w, h}, fill, p + 1 - offset);
  }

  /**
   * Refuses LZW data too short for the first image: each code, of at least 3 bits, yields at most
   * 4096 pixels.
   */
  @Override
  public void checkData(byte[] data, int offset, int length) throws ImageException {
    long needed = ((long) frame[2] * frame[3] + PIXELS_PER_BYTE - 1) / PIXELS_PER_BYTE;
    long available = length - lzwAt;
    if (available < needed) {
      throw new ImageException(
          String.format(
              "Corrupt GIF: header declares its first image %dx%d (at least %d bytes of LZW data)"
                  + " but only %d bytes follow",
              frame[2], frame[3], needed, available));
    }
  }

  /** Skips the sub-blocks from {@code p} (each a length byte and its bytes, to a 0 length). */
  private static int skipSubBlocks(byte[] data, int p, int end) throws ImageException {
    while (true) {
      need(p + 1, end, "an extension's end");
      int n = u8(data, p);
      p += 1 + n;
      if (n == 0) {
        return p;
      }
    }
  }

  private static void need(long upTo, int end, String what) throws ImageException {
    if (upTo > end) {
      throw new ImageException("Truncated GIF header: the data ends before " + what);
    }
  }

  @Override
  public ImageInfo info() {
    return info;
  }

  /**
   * OpenCV's canvas and its output (4 bytes a screen pixel each), the conversion's copy (3, less
   * the 3 of an RGB output), the frame's codes (1 byte a frame pixel) and the copy kept for its
   * disposal (4), and the LZW table (about 8.5 MB at most).
   */
  @Override
  public long decoderBytes() {
    long framePixels = (long) frame[2] * frame[3];
    return DecodeCost.plus(DecodeCost.times(info.pixels(), 8) + 5 * framePixels, LZW_TABLE_BYTES);
  }

  @Override
  public RgbConversion conversion() {
    return RgbConversion.gif(fill, frame[0], frame[1], frame[2], frame[3]);
  }
}
