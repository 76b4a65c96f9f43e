package dev.spindle.spark.image;

import java.util.List;

/**
 * What decoding and transforming one image will allocate, known from its headers and the plan
 * before anything is allocated, and the refusal of headers that declare more image than their data
 * can hold. {@link #of} reads the headers (a few small arrays) and keeps a JPEG's frame and first
 * scan offset for the decoder's checks, so they are not read again; {@link #bytes} is arithmetic.
 * Immutable; any thread.
 *
 * <p>Counted: the native copy of the encoded bytes; the decoder's RGB output at the reduced scale;
 * the decoder's own buffers (libjpeg's whole-image coefficient buffer for progressive and
 * multi-scan JPEGs and its row buffers; libpng's row pointers and rows, and OpenCV's frame buffers
 * for animated PNGs; for the other formats what their {@link FormatHeader} says, with the copy a
 * {@link RgbConversion} makes); Spindle's copies of the decoded image (off the direct path, and
 * again when EXIF turns it); and each resample stage's buffers and output. Each term is exact or an
 * upper bound; the output writer's rows, of the transform's fixed output size, are left out.
 */
final class DecodeCost {
  private final ImageInfo info;
  private final int length;
  private final long decoderBytes;
  private final JpegFrame frame;
  private final int firstScan;
  private final FormatHeader header;

  private DecodeCost(
      ImageInfo info,
      int length,
      long decoderBytes,
      JpegFrame frame,
      int firstScan,
      FormatHeader header) {
    this.info = info;
    this.length = length;
    this.decoderBytes = decoderBytes;
    this.frame = frame;
    this.firstScan = firstScan;
    this.header = header;
  }

  /**
   * Reads the headers of the image {@code info} describes.
   *
   * @throws ImageException when the data after the headers is too short to hold the declared image
   *     (see {@link JpegScan#minimumBits}, {@link PngHeader#checkData} and each {@link
   *     FormatHeader}), or a PNG chunk declares more bytes than follow it ({@link
   *     PngHeader#checkChunks})
   */
  static DecodeCost of(ImageInfo info, byte[] data, int offset, int length) throws ImageException {
    if (info.format() == ImageFormat.PNG) {
      PngHeader png = PngHeader.parse(data, offset, length);
      PngHeader.checkChunks(data, offset, length);
      png.checkData(PngHeader.dataAfterHeader(length));
      return new DecodeCost(info, length, png.decoderBytes(), null, -1, null);
    }
    if (info.format() != ImageFormat.JPEG) {
      FormatHeader header = FormatHeader.read(info.format(), data, offset, length);
      header.checkData(data, offset, length);
      return new DecodeCost(info, length, header.decoderBytes(), null, -1, header);
    }
    int frameBody = HeaderProbe.jpegFrameHeader(data, offset, length);
    JpegFrame frame = JpegFrame.read(data, frameBody);
    int sos = HeaderProbe.jpegFirstScan(data, offset, length, frameBody);
    JpegScan scan = sos < 0 ? null : JpegScan.read(data, sos + 2, frame);
    if (scan != null) {
      checkScanData(frame, scan, offset + length - scan.data());
    }
    boolean multiScan =
        frame.progressive() || scan != null && scan.components().length < frame.components();
    long coefficients = multiScan ? frame.coefficientBytes() : 0;
    return new DecodeCost(info, length, coefficients + frame.rowBytes(), frame, sos, null);
  }

  ImageInfo info() {
    return info;
  }

  /**
   * Width of the decoder's output at full scale: the declared width, or the height for a TIFF the
   * decoder turns ({@link FormatHeader#decodedWidth}).
   */
  int decodedWidth() {
    return header == null ? info.width() : header.decodedWidth();
  }

  /** Height of the decoder's output at full scale; see {@link #decodedWidth}. */
  int decodedHeight() {
    return header == null ? info.height() : header.decodedHeight();
  }

  /**
   * The EXIF orientation (1..8) Spindle applies when {@code spark.spindle.image.exifOrientation} is
   * on, as Pillow's {@code ImageOps.exif_transpose}: a JPEG's first APP1 "Exif" segment, a PNG's
   * {@code eXIf} chunk, a WebP's {@code EXIF} chunk; 1 otherwise (a TIFF's orientation is applied
   * by its decoder whatever the setting). {@code data}: the bytes this was made of.
   */
  int orientation(byte[] data, int offset, int length) {
    return switch (info.format()) {
      case JPEG -> HeaderProbe.jpegOrientation(data, offset, length);
      case PNG -> PngHeader.orientation(data, offset, length);
      default -> header.orientation();
    };
  }

  /** {@link FormatHeader#verify} of the bytes this was made of; nothing for JPEG and PNG. */
  void verify(byte[] data, int offset, int length) throws ImageException {
    if (header != null) {
      header.verify(data, offset, length);
    }
  }

  /** How the decoder's output becomes Pillow's RGB. */
  RgbConversion conversion() {
    return header == null ? RgbConversion.NONE : header.conversion();
  }

  /** A JPEG's frame header; null for the other formats. */
  JpegFrame frame() {
    return frame;
  }

  /**
   * Offset in the data of a JPEG's first start-of-scan marker ({@link HeaderProbe#jpegFirstScan});
   * -1 when the data ends before it, and for the other formats.
   */
  int firstScan() {
    return firstScan;
  }

  private static void checkScanData(JpegFrame frame, JpegScan scan, long available)
      throws ImageException {
    long bits = scan.minimumBits(frame);
    if (bits > 8 * available) {
      throw new ImageException(
          String.format(
              "Corrupt JPEG: header declares %dx%d (%d blocks in"
                  + " its first scan, at least %d bytes of scan data) but only %d bytes follow the scan"
                  + " header",
              frame.width(), frame.height(), scan.blocks(frame), (bits + 7) / 8, available));
    }
  }

  /**
   * Bytes this image takes to decode at {@code 1 / reduce} scale and run through {@code stages} on
   * whichever resample path allocates more, so that whether it is refused never depends on the path
   * {@link ImageTransform#apply} takes (the vector path only once warm, only on some CPUs): the
   * scalar path (a copy of the decoded image), or the vector path for the last stage, reading the
   * decoder's buffer without a copy when {@code directable}. {@code orientation} is the EXIF
   * orientation applied to the copy (another copy unless upright).
   */
  long bytes(int reduce, List<Stage> stages, boolean directable, int orientation) {
    return Math.max(
        pathBytes(reduce, stages, false, orientation, false),
        pathBytes(reduce, stages, directable, orientation, true));
  }

  /** {@link #bytes} on one path: {@code direct} without the copy, {@code vector} last stage. */
  private long pathBytes(
      int reduce, List<Stage> stages, boolean direct, int orientation, boolean vector) {
    long w = (decodedWidth() + reduce - 1) / reduce;
    long h = (decodedHeight() + reduce - 1) / reduce;
    long decoded = times(w * h, 3);
    boolean oriented = orientation != Orientation.NORMAL;
    long copies = direct ? 0 : times(decoded, oriented ? 2 : 1);
    long total = plus(plus(length + decoded, decoderBytes), copies);
    boolean swap = Orientation.swapsAxes(orientation);
    long sw = swap ? h : w;
    long sh = swap ? w : h;
    for (int i = 0; i < stages.size(); i++) {
      Stage s = stages.get(i);
      boolean vectorStage = vector && i == stages.size() - 1 && !s.pads();
      total = plus(total, resampleBytes(sw, sh, s.window(), vectorStage));
      sw = s.window().width();
      sh = s.window().height();
    }
    return total;
  }

  /**
   * An upper bound of one stage's buffers from a {@code sw x sh} source: the horizontal pass (at
   * most 12 bytes per source row and window column: three int channels, or the vector path's planar
   * bytes) and a source row of ints; on the vector path, its copy of the source rows it reads and
   * its transposed blocks; on the scalar path, its window, twice (the padded window and the stage's
   * output).
   */
  private static long resampleBytes(long sw, long sh, Stage.Rect window, boolean vector) {
    long rows = (sh + 7) / 8 * 8;
    long columns = (window.width() + 7L) / 8 * 8;
    long pass = plus(times(rows, times(columns, 12)), times(sw, 12));
    if (vector) {
      long sourceRow = 3 * sw + 8;
      return plus(pass, plus(times(rows, sourceRow), times(sourceRow + 8, 8)));
    }
    return plus(pass, times((long) window.width() * window.height(), 6));
  }

  /** {@code a * b} for non-negative values, {@link Long#MAX_VALUE} when it overflows. */
  static long times(long a, long b) {
    return Math.multiplyHigh(a, b) != 0 || a * b < 0 ? Long.MAX_VALUE : a * b;
  }

  /** {@code a + b} for non-negative values, {@link Long#MAX_VALUE} when it overflows. */
  static long plus(long a, long b) {
    return a + b < 0 ? Long.MAX_VALUE : a + b;
  }
}
