package dev.spindle.spark.image;

/**
 * The first image file directory of a classic TIFF, read with bounds checks: where each entry of
 * interest is and its values (BYTE, SHORT or LONG), in the file's byte order. Reads entries once,
 * keeps offsets only; values are read on demand. Immutable; any thread.
 */
final class TiffIfd {
  static final int WIDTH = 256;
  static final int HEIGHT = 257;
  static final int BITS_PER_SAMPLE = 258;
  static final int COMPRESSION = 259;
  static final int PHOTOMETRIC = 262;
  static final int STRIP_OFFSETS = 273;
  static final int ORIENTATION = 274;
  static final int SAMPLES_PER_PIXEL = 277;
  static final int ROWS_PER_STRIP = 278;
  static final int STRIP_BYTE_COUNTS = 279;
  static final int PLANAR_CONFIG = 284;
  static final int COLOR_MAP = 320;
  static final int TILE_WIDTH = 322;
  static final int TILE_LENGTH = 323;
  static final int TILE_OFFSETS = 324;
  static final int TILE_BYTE_COUNTS = 325;
  static final int EXTRA_SAMPLES = 338;
  static final int SAMPLE_FORMAT = 339;

  private static final int[] TAGS = {
    WIDTH,
    HEIGHT,
    BITS_PER_SAMPLE,
    COMPRESSION,
    PHOTOMETRIC,
    STRIP_OFFSETS,
    ORIENTATION,
    SAMPLES_PER_PIXEL,
    ROWS_PER_STRIP,
    STRIP_BYTE_COUNTS,
    PLANAR_CONFIG,
    COLOR_MAP,
    TILE_WIDTH,
    TILE_LENGTH,
    TILE_OFFSETS,
    TILE_BYTE_COUNTS,
    EXTRA_SAMPLES,
    SAMPLE_FORMAT
  };

  private final byte[] data;
  private final int tiff;
  private final int end;
  private final boolean little;
  private final int[] entries = new int[TAGS.length];

  private TiffIfd(byte[] data, int tiff, int end, boolean little) {
    this.data = data;
    this.tiff = tiff;
    this.end = end;
    this.little = little;
    java.util.Arrays.fill(entries, -1);
  }

  /** The first IFD of the classic TIFF at {@code data[offset, offset + length)}. */
  static TiffIfd first(byte[] data, int offset, int length) throws ImageException {
    if (length < 8) {
      throw new ImageException("Truncated TIFF header: " + length + " bytes");
    }
    boolean little = data[offset] == 'I';
    TiffIfd ifd = new TiffIfd(data, offset, offset + length, little);
    if (ifd.u16(offset + 2) == 43) {
      throw new ImageException("Unsupported TIFF: BigTIFF is not decoded");
    }
    long at = ifd.u32(offset + 4);
    if (at < 8 || at + 2 > length) {
      throw new ImageException(
          "Garbled TIFF header: its first IFD at byte " + at + " of " + length);
    }
    int p = offset + (int) at;
    int count = ifd.u16(p);
    if (at + 2 + 12L * count > length) {
      throw new ImageException(
          "Truncated TIFF header: the "
              + count
              + " entries of its first IFD run past the end of its "
              + length
              + " bytes");
    }
    for (int i = 0; i < count; i++) {
      int e = p + 2 + 12 * i;
      int slot = java.util.Arrays.binarySearch(TAGS, ifd.u16(e));
      if (slot >= 0 && ifd.entries[slot] < 0) {
        ifd.entries[slot] = e;
      }
    }
    return ifd;
  }

  boolean has(int tag) {
    return entry(tag) >= 0;
  }

  /** The number of values of {@code tag}; 0 when absent. */
  long count(int tag) {
    int e = entry(tag);
    return e < 0 ? 0 : u32(e + 4);
  }

  /** Value {@code index} of {@code tag}, or {@code otherwise} when the tag is absent. */
  long value(int tag, int index, long otherwise) throws ImageException {
    int e = entry(tag);
    if (e < 0) {
      return otherwise;
    }
    int type = u16(e + 2);
    int size =
        switch (type) {
          case 1 -> 1;
          case 3 -> 2;
          case 4 -> 4;
          default ->
              throw new ImageException(
                  "Garbled TIFF header: tag "
                      + tag
                      + " of type "
                      + type
                      + " (BYTE, SHORT or LONG)");
        };
    long count = u32(e + 4);
    if (index >= count) {
      throw new ImageException(
          "Garbled TIFF header: tag " + tag + " has " + count + " values, not " + (index + 1));
    }
    long at = count * size <= 4 ? e + 8 - tiff : u32(e + 8);
    long p = at + (long) index * size;
    if (p + size > end - tiff) {
      throw new ImageException(
          "Truncated TIFF header: tag " + tag + "'s values at byte " + at + " run past the end");
    }
    int q = tiff + (int) p;
    return switch (size) {
      case 1 -> data[q] & 0xFF;
      case 2 -> u16(q);
      default -> u32(q);
    };
  }

  /** Value 0 of {@code tag}; refuses the image when it is absent. */
  long required(int tag, String name) throws ImageException {
    if (!has(tag)) {
      throw new ImageException("Garbled TIFF header: no " + name + " (tag " + tag + ")");
    }
    return value(tag, 0, 0);
  }

  private int entry(int tag) {
    return entries[java.util.Arrays.binarySearch(TAGS, tag)];
  }

  int u16(int p) {
    return little ? HeaderProbe.le16(data, p) : HeaderProbe.u16(data, p);
  }

  long u32(int p) {
    return little ? HeaderProbe.le32(data, p) : HeaderProbe.u32(data, p);
  }
}
