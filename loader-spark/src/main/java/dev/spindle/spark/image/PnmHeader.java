package dev.spindle.spark.image;

/**
 * A Netpbm header: {@code P1} to {@code P6}, then width, height and (but for bitmaps) the maximum
 * sample value, as whitespace-separated decimal numbers with {@code #} comments between them, and
 * one whitespace before the samples. Plain ({@code P1}-{@code P3}, decimal text) and raw ({@code
 * P4}-{@code P6}); 1 to 16 bits a sample. Immutable; any thread.
 *
 * <p>Samples are scaled as Pillow 9.4 scales them, {@code round(v / maxval * 255)}: OpenCV keeps a
 * raw file's samples as they are and truncates a plain file's ({@link RgbConversion}). Refused by
 * name: 16-bit grayscale ({@code P2}/{@code P5} with a maximum over 255), which Pillow reads as
 * 32-bit integers that {@code convert("RGB")} clips at 255, so torchvision's loader sees a nearly
 * white image. Still different: a plain file whose last number ends the data without a whitespace
 * (OpenCV refuses it, Pillow reads it), samples over the maximum (Pillow refuses them in plain
 * files and clips them in raw ones; OpenCV clips plain ones and scales raw ones).
 */
final class PnmHeader implements FormatHeader {
  /** Longest number Pillow reads in a header ("Token too long in file header"). */
  private static final int MAX_DIGITS = 10;

  private final ImageInfo info;
  private final int kind;
  private final int maxval;
  private final int samplesAt;

  private PnmHeader(ImageInfo info, int kind, int maxval, int samplesAt) {
    this.info = info;
    this.kind = kind;
    this.maxval = maxval;
    this.samplesAt = samplesAt;
  }

  /** Netpbm's whitespace (and Pillow's): space, tab, LF, VT, FF, CR. */
  static boolean whitespace(byte b) {
    return b == ' ' || b == '\t' || b == '\n' || b == 0x0B || b == '\f' || b == '\r';
  }

  static PnmHeader read(byte[] data, int offset, int length) throws ImageException {
    int kind = data[offset + 1] - '0';
    boolean bitmap = kind == 1 || kind == 4;
    int end = offset + length;
    long[] number = new long[1];
    int p = number(data, offset + 2, end, number, "width");
    long width = number[0];
    p = number(data, p, end, number, "height");
    long height = number[0];
    long maxval = 1;
    if (!bitmap) {
      p = number(data, p, end, number, "maximum value");
      maxval = number[0];
    }
    if (width == 0 || height == 0 || width > Integer.MAX_VALUE || height > Integer.MAX_VALUE) {
      throw new ImageException("Invalid PNM size: " + width + "x" + height);
    }
    if (maxval == 0 || maxval > 65535) {
      throw new ImageException("Invalid PNM maximum value " + maxval + " (1 to 65535)");
    }
    boolean gray = kind != 3 && kind != 6;
    if (gray && maxval > 255) {
      throw new ImageException(
          "Unsupported PNM: 16-bit grayscale (maximum value "
              + maxval
              + "): Pillow reads it as 32-bit integers that convert(\"RGB\") clips at 255, so"
              + " torchvision's loader sees a nearly white image; convert it to 8 bits");
    }
    ImageInfo info = new ImageInfo(ImageFormat.PNM, (int) width, (int) height, gray ? 1 : 3);
    return new PnmHeader(info, kind, (int) maxval, p + 1 - offset);
  }

  /**
   * Reads the decimal number after whitespace and comments from {@code p} into {@code out[0]};
   * returns the offset of the byte after its last digit (a whitespace: the samples start after it).
   */
  private static int number(byte[] data, int p, int end, long[] out, String what)
      throws ImageException {
    while (p < end && (whitespace(data[p]) || data[p] == '#')) {
      if (data[p] == '#') {
        while (p < end && data[p] != '\n' && data[p] != '\r') {
          p++;
        }
      } else {
        p++;
      }
    }
    int start = p;
    long v = 0;
    while (p < end && data[p] >= '0' && data[p] <= '9' && p - start < MAX_DIGITS) {
      v = v * 10 + (data[p++] - '0');
    }
    if (p >= end) {
      throw new ImageException("Truncated PNM header: the data ends in its " + what);
    }
    if (p == start) {
      throw new ImageException(
          String.format(
              "Garbled PNM header: byte 0x%02X where its %s should be", data[p] & 0xFF, what));
    }
    if (!whitespace(data[p])) {
      throw new ImageException(
          String.format("Garbled PNM header: byte 0x%02X after its %s", data[p] & 0xFF, what));
    }
    out[0] = v;
    return p;
  }

  /**
   * Refuses data too short for the declared samples: raw files hold every sample's bytes; plain
   * files at least a digit a sample and, but for bitmaps, a whitespace between samples.
   */
  @Override
  public void checkData(byte[] data, int offset, int length) throws ImageException {
    long n = DecodeCost.times(info.pixels(), info.channels());
    long needed =
        switch (kind) {
          case 1 -> n;
          case 2, 3 -> 2 * n - 1;
          case 4 -> DecodeCost.times((info.width() + 7L) / 8, info.height());
          default -> DecodeCost.times(n, maxval > 255 ? 2 : 1);
        };
    long available = Math.max(0, length - samplesAt);
    if (available < needed) {
      throw new ImageException(
          String.format(
              "Truncated PNM: header declares %dx%d (at least %d bytes of samples) but only %d"
                  + " bytes follow it",
              info.width(), info.height(), needed, available));
    }
  }

  @Override
  public ImageInfo info() {
    return info;
  }

  /**
   * OpenCV's row buffer (two bytes a sample of a row); for 16-bit samples, its 16-bit output (3
   * more bytes a pixel than 8-bit) and the conversion's copy (3).
   */
  @Override
  public long decoderBytes() {
    long rows = 6L * info.width() + 64;
    return maxval > 255 ? DecodeCost.plus(rows, DecodeCost.times(info.pixels(), 6)) : rows;
  }

  @Override
  public RgbConversion conversion() {
    if (maxval > 255) {
      return RgbConversion.deep(maxval);
    }
    if (maxval == 255 || kind == 1 || kind == 4) { // OpenCV gives bitmaps as 0 and 255 already
      return RgbConversion.NONE;
    }
    byte[] t = table();
    return RgbConversion.tables(t, t, t);
  }

  /**
   * From OpenCV's byte to Pillow's {@code round(v / maxval * 255)}: OpenCV gives a raw file's
   * sample {@code v} as it is (Pillow clips at 255), a plain file's as {@code v * 255 / maxval}
   * rounded down.
   */
  private byte[] table() {
    boolean plain = kind <= 3;
    byte[] t = new byte[256];
    for (int v = 0; v < 256; v++) {
      int sample = plain ? Math.min(v, maxval) : v;
      int pillow = Math.min(255, (int) Math.rint((double) sample / maxval * 255));
      t[plain ? sample * 255 / maxval : v] = (byte) pillow;
    }
    return t;
  }
}
