package dev.spindle.spark.image;

import static dev.spindle.spark.image.TiffIfd.BITS_PER_SAMPLE;
import static dev.spindle.spark.image.TiffIfd.COLOR_MAP;
import static dev.spindle.spark.image.TiffIfd.COMPRESSION;
import static dev.spindle.spark.image.TiffIfd.EXTRA_SAMPLES;
import static dev.spindle.spark.image.TiffIfd.HEIGHT;
import static dev.spindle.spark.image.TiffIfd.ORIENTATION;
import static dev.spindle.spark.image.TiffIfd.PHOTOMETRIC;
import static dev.spindle.spark.image.TiffIfd.PLANAR_CONFIG;
import static dev.spindle.spark.image.TiffIfd.ROWS_PER_STRIP;
import static dev.spindle.spark.image.TiffIfd.SAMPLES_PER_PIXEL;
import static dev.spindle.spark.image.TiffIfd.SAMPLE_FORMAT;
import static dev.spindle.spark.image.TiffIfd.STRIP_BYTE_COUNTS;
import static dev.spindle.spark.image.TiffIfd.STRIP_OFFSETS;
import static dev.spindle.spark.image.TiffIfd.TILE_BYTE_COUNTS;
import static dev.spindle.spark.image.TiffIfd.TILE_LENGTH;
import static dev.spindle.spark.image.TiffIfd.TILE_OFFSETS;
import static dev.spindle.spark.image.TiffIfd.TILE_WIDTH;
import static dev.spindle.spark.image.TiffIfd.WIDTH;

import java.util.Set;

/**
 * The first image of a classic TIFF, as its first IFD describes it: what OpenCV 4.13's libtiff
 * reader decodes as Pillow 9.4 does, and the rest refused by name. Immutable; any thread.
 *
 * <p>Decoded: bilevel (1 bit), 8-bit grayscale (with or without an unassociated alpha), palette (4
 * or 8 bits), 8-bit RGB (with or without an unspecified extra sample), 16-bit RGB (scaled to its
 * high byte, as Pillow), CMYK (OpenCV's integer conversion, within one step of Pillow's), YCbCr
 * with JPEG compression; strips or tiles, contiguous or (8-bit) separate planes; uncompressed,
 * CCITT, LZW, JPEG, Deflate or PackBits. The Orientation tag (274) is applied by the decoder, as
 * Pillow applies it when loading a TIFF, so a TIFF comes out upright whether or not {@code
 * spark.spindle.image.exifOrientation} is on (Pillow 9.4's {@code exif_transpose} would turn it a
 * second time).
 *
 * <p>Refused: BigTIFF; samples that are signed, floating point, 2, 4 (but for a palette), 12 or 32
 * bits; 16-bit grayscale (Pillow's {@code convert("RGB")} clips it at 255: a nearly white image);
 * RGB with an alpha channel (libtiff multiplies the colours by alpha, Pillow keeps them); other
 * photometric interpretations and compressions; strips or tiles OpenCV decodes line by line (1 GiB
 * or more of RGBA), which then ignores the orientation; uncompressed tiles whose size is no
 * multiple of 1024 bytes (libtiff 4.7 compares them with its rounded-up read buffer and fails);
 * tiled TIFFs with an orientation other than 1 (OpenCV turns each tile, not the image).
 */
final class TiffHeader implements FormatHeader {
  /** Compressions decoded: none, CCITT RLE/G3/G4, LZW, JPEG, Adobe Deflate, PackBits, Deflate. */
  private static final Set<Long> COMPRESSIONS = Set.of(1L, 2L, 3L, 4L, 5L, 7L, 8L, 32773L, 32946L);

  /** OpenCV's {@code MAX_TILE_SIZE * 95 / 100}: buffers from here on take its line-by-line path. */
  private static final long LINE_BY_LINE_BYTES = (1L << 30) * 95 / 100;

  private static final long UNSET = -1;

  private final ImageInfo info;
  private final boolean turned;
  private final Strips strips;
  private final int samples;
  private final int bits;
  private final long compression;
  private final long planar;

  /** The image's strips or tiles: how many, of how many pixels, where their offsets are. */
  private record Strips(
      TiffIfd ifd, boolean tiled, long units, long pixels, long across, long rows) {
    String unit() {
      return tiled ? "tile" : "strip";
    }
  }

  private TiffHeader(
      ImageInfo info,
      boolean turned,
      Strips strips,
      int samples,
      int bits,
      long compression,
      long planar) {
    this.info = info;
    this.turned = turned;
    this.strips = strips;
    this.samples = samples;
    this.bits = bits;
    this.compression = compression;
    this.planar = planar;
  }

  static TiffHeader read(byte[] data, int offset, int length) throws ImageException {
    TiffIfd ifd = TiffIfd.first(data, offset, length);
    long width = ifd.required(WIDTH, "ImageWidth");
    long height = ifd.required(HEIGHT, "ImageLength");
    if (width == 0 || height == 0 || width > Integer.MAX_VALUE || height > Integer.MAX_VALUE) {
      throw new ImageException("Invalid TIFF size: " + width + "x" + height);
    }
    int samples = (int) ifd.value(SAMPLES_PER_PIXEL, 0, 1);
    int bits = uniform(ifd, BITS_PER_SAMPLE, samples, 1, "bits per sample");
    if (uniform(ifd, SAMPLE_FORMAT, samples, 1, "sample format") != 1) {
      throw new ImageException(
          "Unsupported TIFF sample format "
              + ifd.value(SAMPLE_FORMAT, 0, 1)
              + " (only unsigned integers are decoded)");
    }
    long compression = ifd.value(COMPRESSION, 0, 1);
    if (!COMPRESSIONS.contains(compression)) {
      throw new ImageException("Unsupported TIFF compression " + compression);
    }
    long photometric = ifd.required(PHOTOMETRIC, "PhotometricInterpretation");
    long planar = ifd.value(PLANAR_CONFIG, 0, 1);
    int channels = channels(ifd, photometric, samples, bits, compression, planar);
    Strips strips = strips(ifd, width, height, samples, bits, planar);
    long tileBytes = DecodeCost.times(strips.pixels(), (samples * bits + 7) / 8);
    if (strips.tiled() && compression == 1 && planar == 1 && tileBytes % 1024 != 0) {
      throw new ImageException(
          "Unsupported TIFF: uncompressed tiles of "
              + tileBytes
              + " bytes (OpenCV's libtiff 4.7 reads them in multiples of 1024 bytes only)");
    }
    long o = ifd.value(ORIENTATION, 0, 1);
    if (strips.tiled() && o >= 2 && o <= 8) {
      throw new ImageException(
          "Unsupported TIFF: tiles with orientation "
              + o
              + " (OpenCV turns each tile in place,"
              + " not the image)");
    }
    ImageInfo info = new ImageInfo(ImageFormat.TIFF, (int) width, (int) height, channels);
    return new TiffHeader(info, o >= 5 && o <= 8, strips, samples, bits, compression, planar);
  }

  /** The tag's one value for every sample ({@code otherwise} when absent); refuses mixed ones. */
  private static int uniform(TiffIfd ifd, int tag, int samples, long otherwise, String what)
      throws ImageException {
    long first = ifd.value(tag, 0, otherwise);
    long n = Math.min(ifd.count(tag), samples);
    for (int i = 1; i < n; i++) {
      if (ifd.value(tag, i, otherwise) != first) {
        throw new ImageException("Unsupported TIFF: " + what + " differ between samples");
      }
    }
    return (int) Math.min(first, Integer.MAX_VALUE);
  }

  /** The stored channels of a decoded variant; refuses the others, naming why. */
  private static int channels(
      TiffIfd ifd, long photometric, int samples, int bits, long compression, long planar)
      throws ImageException {
    long extra = samples > colourSamples(photometric) ? ifd.value(EXTRA_SAMPLES, 0, 0) : 0;
    if (bits == 16 && planar != 1) {
      throw new ImageException("Unsupported TIFF: 16-bit samples in separate planes");
    }
    switch ((int) photometric) {
      case 0, 1 -> {
        if (bits == 16) {
          throw new ImageException(
              "Unsupported TIFF: 16-bit grayscale: Pillow's convert(\"RGB\") clips its values at"
                  + " 255, so torchvision's loader sees a nearly white image; convert it to 8"
                  + " bits");
        }
        require(bits == 8 || bits == 1 && samples == 1, bits + "-bit grayscale (1 or 8 bits)");
        require(
            samples == 1 || samples == 2 && extra != 1,
            "grayscale with " + samples + " samples a pixel (and associated alpha)");
        return samples;
      }
      case 2 -> {
        require(bits == 8 || bits == 16, bits + "-bit RGB (8 or 16 bits)");
        require(
            samples == 3 || samples == 4 && extra == 0,
            samples == 4
                ? "RGB with an alpha channel (libtiff multiplies the colours by alpha, Pillow keeps"
                    + " them)"
                : "RGB with " + samples + " samples a pixel");
        return 3;
      }
      case 3 -> {
        require(samples == 1 && (bits == 4 || bits == 8), bits + "-bit palette (4 or 8 bits)");
        require(ifd.count(COLOR_MAP) == 3L << bits, "a palette without its ColorMap");
        return 3;
      }
      case 5 -> {
        require(
            samples == 4 && bits == 8, samples + " samples of " + bits + " bits (CMYK: 4 of 8)");
        return 4;
      }
      case 6 -> {
        require(compression == 7 && samples == 3 && bits == 8, "YCbCr without JPEG compression");
        return 3;
      }
      default ->
          throw new ImageException(
              "Unsupported TIFF photometric interpretation "
                  + photometric
                  + " (grayscale, RGB, palette, CMYK and JPEG YCbCr are decoded)");
    }
  }

  private static int colourSamples(long photometric) {
    return photometric == 2 || photometric == 6 ? 3 : photometric == 5 ? 4 : 1;
  }

  private static void require(boolean ok, String what) throws ImageException {
    if (!ok) {
      throw new ImageException("Unsupported TIFF: " + what);
    }
  }

  /**
   * The strips or tiles: refuses a layout whose offsets and byte counts are not one per strip or
   * tile.
   */
  private static Strips strips(
      TiffIfd ifd, long width, long height, int samples, int bits, long planar)
      throws ImageException {
    boolean tiled = ifd.has(TILE_WIDTH) || ifd.has(TILE_LENGTH);
    long across = tiled ? ifd.required(TILE_WIDTH, "TileWidth") : width;
    long rows =
        tiled ? ifd.required(TILE_LENGTH, "TileLength") : ifd.value(ROWS_PER_STRIP, 0, UNSET);
    if (!tiled && (rows <= 0 || rows == 0xFFFFFFFFL)) {
      rows = height; // OpenCV's strip: RowsPerStrip as it is (even past the image), else all rows
    }
    if (across == 0 || rows == 0) {
      throw new ImageException("Garbled TIFF header: tiles of " + across + "x" + rows);
    }
    long units =
        DecodeCost.times(
            DecodeCost.times((width + across - 1) / across, (height + rows - 1) / rows),
            planar == 2 ? samples : 1);
    Strips strips = new Strips(ifd, tiled, units, DecodeCost.times(across, rows), across, rows);
    long offsets = ifd.count(tiled ? TILE_OFFSETS : STRIP_OFFSETS);
    long counts = ifd.count(tiled ? TILE_BYTE_COUNTS : STRIP_BYTE_COUNTS);
    if (offsets != units || counts != units) {
      throw new ImageException(
          String.format(
              "Garbled TIFF header: %d %s offsets and %d byte counts for its %d %ss",
              offsets, strips.unit(), counts, units, strips.unit()));
    }
    return strips;
  }

  /**
   * Refuses strips or tiles OpenCV would decode line by line (1 GiB or more as RGBA), and those
   * that lie past the end of the data.
   */
  @Override
  public void checkData(byte[] data, int offset, int length) throws ImageException {
    long buffer = DecodeCost.times(strips.pixels(), bits == 16 ? 2L * samples : 4);
    if (buffer >= LINE_BY_LINE_BYTES) {
      throw new ImageException(
          String.format(
              "Unsupported TIFF: %ss of %dx%d pixels (OpenCV decodes a %s of 1 GiB or more line"
                  + " by line, which ignores the orientation)",
              strips.unit(), strips.across(), strips.rows(), strips.unit()));
    }
    TiffIfd ifd = strips.ifd();
    int offsets = strips.tiled() ? TILE_OFFSETS : STRIP_OFFSETS;
    int counts = strips.tiled() ? TILE_BYTE_COUNTS : STRIP_BYTE_COUNTS;
    for (int i = 0; i < strips.units(); i++) {
      long at = ifd.value(offsets, i, 0);
      long n = ifd.value(counts, i, 0);
      if (at + n > length) {
        throw new ImageException(
            String.format(
                "Truncated TIFF: %s %d (%d bytes at byte %d) runs past the end of its %d bytes",
                strips.unit(), i, n, at, length));
      }
    }
  }

  /**
   * Reads every strip or tile as libtiff would ({@link TiffStripCheck}): OpenCV's 8-bit reader
   * decodes past libtiff's errors, Pillow refuses the file.
   */
  @Override
  public void verify(byte[] data, int offset, int length) throws ImageException {
    TiffIfd ifd = strips.ifd();
    int offsets = strips.tiled() ? TILE_OFFSETS : STRIP_OFFSETS;
    int counts = strips.tiled() ? TILE_BYTE_COUNTS : STRIP_BYTE_COUNTS;
    int planes = planar == 2 ? samples : 1;
    long rowBytes = (strips.across() * (samples / planes) * bits + 7) / 8;
    long perPlane = strips.units() / planes;
    TiffStripCheck check = new TiffStripCheck();
    for (int i = 0; i < strips.units(); i++) {
      long rows = strips.rows();
      if (!strips.tiled()) {
        rows = Math.min(rows, info.height() - (i % perPlane) * strips.rows());
      }
      long at = ifd.value(offsets, i, 0);
      int n = (int) ifd.value(counts, i, 0);
      String problem = check.problem(data, offset + (int) at, n, compression, rowBytes * rows);
      if (problem != null) {
        throw new ImageException("Corrupt TIFF: " + strips.unit() + " " + i + " " + problem);
      }
    }
  }

  @Override
  public ImageInfo info() {
    return info;
  }

  @Override
  public int decodedWidth() {
    return turned ? info.height() : info.width();
  }

  @Override
  public int decodedHeight() {
    return turned ? info.width() : info.height();
  }

  /**
   * One strip or tile's buffers: OpenCV's RGBA (4 bytes a pixel) or 16-bit samples, libtiff's
   * decoded strip (a buffer per plane at most: all samples), libjpeg's rows for JPEG (3 bytes a
   * pixel at most); for 16 bits also the 16-bit output's 3 more bytes a pixel and the conversion's
   * copy (3); 64 KiB of libtiff's directory and tables, 16 bytes a strip of its offset arrays.
   */
  @Override
  public long decoderBytes() {
    long pixels = strips.pixels();
    long strip = DecodeCost.times(pixels, bits == 16 ? 2L * samples : 4);
    long decoded = DecodeCost.times(pixels, (samples * Math.max(bits, 8) + 7) / 8);
    long jpeg = compression == 7 ? DecodeCost.times(pixels, 3) : 0;
    long deep = bits == 16 ? DecodeCost.times(info.pixels(), 6) : 0;
    long tables = DecodeCost.plus(64 << 10, DecodeCost.times(strips.units(), 16));
    return DecodeCost.plus(
        DecodeCost.plus(strip, decoded), DecodeCost.plus(jpeg, DecodeCost.plus(deep, tables)));
  }

  @Override
  public RgbConversion conversion() {
    return bits == 16 ? RgbConversion.deep(0) : RgbConversion.NONE;
  }
}
