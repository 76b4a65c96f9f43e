package dev.spindle.spark.image;

/**
 * The header of an image in one of the formats OpenCV decodes whole, beside JPEG and PNG: BMP, PNM,
 * TIFF, WebP and GIF. Read before anything is allocated, it says what the image is ({@link #info}),
 * what OpenCV will allocate to decode it ({@link #decoderBytes}), how OpenCV's output becomes
 * Pillow's {@code convert("RGB")} ({@link #conversion}) and how it is oriented. Variants that
 * OpenCV cannot decode as Pillow does, and headers that cannot hold what they declare, are refused
 * when read, by name ({@link ImageException}). Immutable; any thread.
 */
interface FormatHeader {
  /** Format, declared size and stored channels. */
  ImageInfo info();

  /**
   * Width of OpenCV's output: the declared width, or the height when the decoder itself turns the
   * image (a TIFF with orientation 5 to 8: libtiff and Pillow both apply a TIFF's orientation tag
   * when they read it).
   */
  default int decodedWidth() {
    return info().width();
  }

  /** Height of OpenCV's output; see {@link #decodedWidth}. */
  default int decodedHeight() {
    return info().height();
  }

  /**
   * The EXIF orientation (1 to 8) that {@code spark.spindle.image.exifOrientation} applies to the
   * decoded image, as Pillow's {@code ImageOps.exif_transpose}: a WebP's EXIF chunk; 1 where the
   * format carries none or the decoder applied it.
   */
  default int orientation() {
    return Orientation.NORMAL;
  }

  /**
   * An upper bound of the bytes OpenCV allocates to decode the image beside an 8-bit RGB output of
   * {@code width * height * 3}, plus {@link #conversion}'s copy when it makes one.
   */
  long decoderBytes();

  /** How OpenCV's output becomes Pillow's RGB. */
  default RgbConversion conversion() {
    return RgbConversion.NONE;
  }

  /**
   * Refuses the image when the data after its header, {@code data[offset, offset + length)} (the
   * bytes it was read from), cannot hold what the header declares, or the decoder would not decode
   * an image of the declared size as declared: a cheap look at lengths and offsets, after {@code
   * maxPixels} and before the decoder allocates for the declared size.
   */
  default void checkData(byte[] data, int offset, int length) throws ImageException {}

  /**
   * Refuses data that OpenCV would decode past its errors where Pillow refuses it (a TIFF's corrupt
   * strips): reads the encoded data, just before it is decoded. {@code data[offset, offset +
   * length)}: the bytes this header was read from.
   */
  default void verify(byte[] data, int offset, int length) throws ImageException {}

  /**
   * Reads the header of {@code data[offset, offset + length)}, whose magic number is {@code
   * format}'s ({@link ImageFormat#sniff}); reads nothing past it (see {@link #checkData}).
   *
   * @throws ImageException for a truncated, garbled or unsupported header
   */
  static FormatHeader read(ImageFormat format, byte[] data, int offset, int length)
      throws ImageException {
    return switch (format) {
      case BMP -> BmpHeader.read(data, offset, length);
      case PNM -> PnmHeader.read(data, offset, length);
      case TIFF -> TiffHeader.read(data, offset, length);
      case WEBP -> WebpHeader.read(data, offset, length);
      case GIF -> GifHeader.read(data, offset, length);
      case JPEG, PNG -> throw new IllegalArgumentException("No FormatHeader for " + format);
    };
  }
}
