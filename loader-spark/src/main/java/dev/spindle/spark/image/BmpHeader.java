package dev.spindle.spark.image;

import static dev.spindle.spark.image.HeaderProbe.le16;
import static dev.spindle.spark.image.HeaderProbe.le32;

/**
 * A BMP's file and info headers: the OS/2 core header (12 bytes), Windows' BITMAPINFOHEADER (40),
 * OS/2 2.x (64), BITMAPV4HEADER (108) and BITMAPV5HEADER (124), the header sizes Pillow reads; 1,
 * 4, 8 (palette), 16, 24 and 32 bits a pixel, uncompressed, RLE8, RLE4 and bit fields; bottom-up or
 * top-down (negative height). Immutable; any thread.
 *
 * <p>Refused by name, as OpenCV 4.13 reads them otherwise than Pillow 9.4 (each measured): 16-bit
 * bit fields in a header larger than 40 bytes (OpenCV looks for the masks after the header), 32-bit
 * masks other than B, G, R (and A) bytes in a 40-byte header (OpenCV assumes those), masks neither
 * reads (16 bits: 5-5-5 and 5-6-5 only; 24-bit bit fields), bit fields in an OS/2 2.x header,
 * palettes of more than 256 colours, and pixel data that starts where the palette does (Pillow
 * moves it past the palette, OpenCV does not). 16-bit pixels are scaled as Pillow scales them
 * ({@link RgbConversion#tables}). Still different: palette indices past the palette's colour count
 * (OpenCV black, Pillow grey {@code (i, i, i)}), RLE4 absolute runs of odd length and RLE deltas
 * (Pillow 9.4 misreads them; OpenCV follows the format), RLE data that ends before the image
 * (OpenCV fills, Pillow refuses).
 */
final class BmpHeader implements FormatHeader {
  private static final int FILE_HEADER = 14;
  private static final int RGB = 0;
  private static final int RLE8 = 1;
  private static final int RLE4 = 2;
  private static final int BITFIELDS = 3;

  private final ImageInfo info;
  private final long stride;
  private final long pixelsAt;
  private final int bits;
  private final RgbConversion conversion;

  /** {@code bits}: of an uncompressed image, 0 for RLE (whose length says nothing of its size). */
  private BmpHeader(
      ImageInfo info, long stride, long pixelsAt, int bits, RgbConversion conversion) {
    this.info = info;
    this.stride = stride;
    this.pixelsAt = pixelsAt;
    this.bits = bits;
    this.conversion = conversion;
  }

  static BmpHeader read(byte[] data, int offset, int length) throws ImageException {
    if (length < FILE_HEADER + 4) {
      throw new ImageException("Truncated BMP header: " + length + " bytes");
    }
    long pixelsAt = le32(data, offset + 10);
    long size = le32(data, offset + FILE_HEADER);
    if (size != 12 && size != 40 && size != 64 && size != 108 && size != 124) {
      throw new ImageException(
          "Unsupported BMP header size "
              + size
              + " (Pillow reads 12, 40, 64, 108 and 124: OS/2 and Windows bitmaps)");
    }
    boolean fieldsAfter =
        size == 40 && length >= FILE_HEADER + 40 && compression(data, offset) == BITFIELDS;
    long headerEnd = FILE_HEADER + size + (fieldsAfter ? 12 : 0);
    if (length < headerEnd) {
      throw new ImageException("Truncated BMP header: " + length + " bytes");
    }
    int p = offset + FILE_HEADER;
    boolean core = size == 12;
    long width = core ? le16(data, p + 4) : (int) le32(data, p + 4);
    long height = core ? le16(data, p + 6) : (int) le32(data, p + 8);
    int bits = le16(data, p + (core ? 10 : 14));
    int compression = core ? RGB : compression(data, offset);
    if (width <= 0 || height == 0 || height == Integer.MIN_VALUE) {
      throw new ImageException("Invalid BMP size: " + width + "x" + height);
    }
    if (!core && bits <= 8 && le32(data, p + 32) > 256) {
      throw new ImageException(
          "Unsupported BMP palette of " + le32(data, p + 32) + " colours (at most 256)");
    }
    checkLayout(bits, compression, size, data, offset);
    if (pixelsAt < headerEnd) {
      throw new ImageException(
          String.format(
              "Garbled BMP header: pixel data at byte %d, inside its headers (to byte %d)",
              pixelsAt, headerEnd));
    }
    if (bits <= 8 && pixelsAt == headerEnd) {
      throw new ImageException(
          "Garbled BMP header: pixel data at byte "
              + pixelsAt
              + ", where its palette starts (Pillow reads the pixels after the palette, OpenCV"
              + " there)");
    }
    int rows = (int) Math.abs(height);
    long stride = (width * bits + 31) / 32 * 4;
    boolean rle = compression == RLE8 || compression == RLE4;
    int channels = bits == 32 && alphaMask(data, p, size, compression) != 0 ? 4 : 3;
    ImageInfo info = new ImageInfo(ImageFormat.BMP, (int) width, rows, channels);
    return new BmpHeader(
        info, stride, pixelsAt, rle ? 0 : bits, conversion(bits, data, offset, compression));
  }

  /** Refuses pixel data that starts past the end or (uncompressed) ends before its last row. */
  @Override
  public void checkData(byte[] data, int offset, int length) throws ImageException {
    long needed = bits == 0 ? 0 : DecodeCost.times(stride, info.height());
    if (pixelsAt + needed > length) {
      throw new ImageException(
          String.format(
              "Truncated BMP: header declares %dx%d (%d bytes of pixels from byte %d) but the data"
                  + " ends at byte %d",
              info.width(), info.height(), needed, pixelsAt, length));
    }
  }

  private static int compression(byte[] data, int offset) {
    return (int) le32(data, offset + FILE_HEADER + 16);
  }

  private static void checkLayout(int bits, int compression, long size, byte[] data, int offset)
      throws ImageException {
    if (bits != 1 && bits != 4 && bits != 8 && bits != 16 && bits != 24 && bits != 32) {
      throw new ImageException("Unsupported BMP bit depth " + bits + " (1, 4, 8, 16, 24, 32)");
    }
    switch (compression) {
      case RGB -> {}
      case RLE8, RLE4 -> {
        if (bits != (compression == RLE8 ? 8 : 4)) {
          throw new ImageException(
              "Garbled BMP header: RLE"
                  + (compression == RLE8 ? 8 : 4)
                  + " with "
                  + bits
                  + " bits a pixel");
        }
      }
      case BITFIELDS -> checkMasks(bits, size, data, offset);
      case 4, 5 ->
          throw new ImageException(
              "Unsupported BMP: its pixels are an embedded " + (compression == 4 ? "JPEG" : "PNG"));
      default -> throw new ImageException("Unsupported BMP compression " + compression);
    }
  }

  private static void checkMasks(int bits, long size, byte[] data, int offset)
      throws ImageException {
    int m = offset + FILE_HEADER + 40; // the masks follow the 40 bytes of BITMAPINFOHEADER
    long r = le32(data, m);
    long g = le32(data, m + 4);
    long b = le32(data, m + 8);
    long a = size >= 108 ? le32(data, m + 12) : 0;
    if (bits != 16 && bits != 32) {
      throw new ImageException("Unsupported BMP: bit fields with " + bits + " bits a pixel");
    }
    if (size == 64 || bits == 16 && size != 40) {
      throw new ImageException(
          "Unsupported BMP: "
              + bits
              + "-bit bit fields in a "
              + size
              + "-byte header (OpenCV reads them from"
              + (bits == 16 ? " 40-byte headers only)" : " 40, 108 and 124-byte headers)"));
    }
    boolean bgr = r == 0xFF0000 && g == 0xFF00 && b == 0xFF && (a == 0 || a == 0xFF000000L);
    boolean supported =
        bits == 16
            ? b == 0x1F && (r == 0x7C00 && g == 0x3E0 || r == 0xF800 && g == 0x7E0)
            : bgr || r == 0 && g == 0 && b == 0 && a == 0 || size > 40 && pillowOnly(r, g, b, a);
    if (!supported) {
      throw new ImageException(
          String.format(
              "Unsupported BMP bit fields R %X G %X B %X A %X in a %d-byte header (16 bits: 5-5-5"
                  + " or 5-6-5; 32 bits: B, G, R, A bytes, or in a 108 or 124-byte header XBGR,"
                  + " ABGR or RGBA)",
              r, g, b, a, size));
    }
  }

  /** The other 32-bit masks Pillow reads; OpenCV reads them from V4 and V5 headers only. */
  private static boolean pillowOnly(long r, long g, long b, long a) {
    boolean xbgr = r == 0xFF000000L && g == 0xFF0000 && b == 0xFF00 && (a == 0 || a == 0xFF);
    boolean rgba = r == 0xFF && g == 0xFF00 && b == 0xFF0000 && a == 0xFF000000L;
    return xbgr || rgba;
  }

  private static long alphaMask(byte[] data, int p, long size, int compression) {
    return compression == BITFIELDS && size >= 108 ? le32(data, p + 52) : 0;
  }

  /** 16-bit pixels: OpenCV's {@code c << 3} (and a 6-bit green's {@code c << 2}) to Pillow's. */
  private static RgbConversion conversion(int bits, byte[] data, int offset, int compression) {
    if (bits != 16) {
      return RgbConversion.NONE;
    }
    boolean green6 = compression == BITFIELDS && le32(data, offset + FILE_HEADER + 44) == 0x7E0;
    byte[] five = table(3, 31);
    return RgbConversion.tables(five, green6 ? table(2, 63) : five, five);
  }

  /** {@code t[v] = (v >> shift) * 255 / max}: Pillow's {@code Unpack.c} for BGR;15 and BGR;16. */
  private static byte[] table(int shift, int max) {
    byte[] t = new byte[256];
    for (int v = 0; v < 256; v++) {
      t[v] = (byte) ((v >> shift) * 255 / max);
    }
    return t;
  }

  @Override
  public ImageInfo info() {
    return info;
  }

  /** OpenCV's row of encoded pixels and a row of RGB (32 bytes of slack each), its palette. */
  @Override
  public long decoderBytes() {
    return DecodeCost.plus(stride, 3L * info.width() + 64 + 1024);
  }

  @Override
  public RgbConversion conversion() {
    return conversion;
  }
}
