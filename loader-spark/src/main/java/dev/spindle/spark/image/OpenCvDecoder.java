package dev.spindle.spark.image;

import static org.bytedeco.opencv.global.opencv_core.CV_8UC1;

import java.nio.ByteBuffer;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.opencv.global.opencv_core;
import org.bytedeco.opencv.global.opencv_imgcodecs;
import org.bytedeco.opencv.opencv_core.Mat;

/**
 * Decodes every format Spindle reads to interleaved RGB uint8 with OpenCV's {@code imdecode}
 * (libjpeg-turbo, libpng, libtiff, libwebp and OpenCV's own BMP, PNM and GIF readers inside, so
 * JPEG output is bit-identical to libjpeg-turbo's).
 *
 * <p>Gray, gray+alpha, palette and RGBA inputs become RGB (alpha dropped, as Pillow's {@code
 * convert("RGB")} does); a PNG's 16-bit samples keep their high byte; where OpenCV's conversion
 * differs from Pillow's, the header's {@link RgbConversion} makes Pillow's. OpenCV's own thread
 * pool is switched off: Spindle's threads call this concurrently, each with its own {@link
 * DecodeScratch}.
 */
final class OpenCvDecoder {
  static {
    // JavaCPP's Pointer first, outside the Loader lock: loading OpenCV holds that lock while its
    // libraries' JNI_OnLoad needs Pointer initialised, and Pointer's initialiser takes the lock. A
    // decode thread loading OpenCV beside another creating its first BytePointer (the native JPEG
    // path, DecodeScratch) otherwise deadlocked, each waiting for the other's class.
    Pointer.maxBytes();
    opencv_core.setNumThreads(0);
  }

  private OpenCvDecoder() {}

  /** Loads OpenCV's native libraries now rather than on the first decode. */
  static void load() {
    // the static initialiser above has run by the time this returns
  }

  /**
   * Decodes {@code data[offset, offset + length)}, whose headers {@code headers} holds ({@link
   * DecodeCost#of}), into the scratch's pixel buffer, at {@code 1 / reduce} scale for a JPEG
   * ({@code reduce} 1, 2, 4 or 8; PNGs always decode at full size). The pixels stay valid until
   * this thread's next decode.
   */
  static DecodedImage decode(
      byte[] data, int offset, int length, DecodeCost headers, int reduce, DecodeScratch scratch)
      throws ImageException {
    return decodeWith(
        data,
        offset,
        length,
        headers,
        reduce,
        scratch,
        (rgb, width, height) -> {
          if (rgb.hasArray()) { // a conversion's copy in this thread's scratch already
            return new DecodedImage(rgb.array(), width, height);
          }
          byte[] pixels = scratch.bytes(DecodeScratch.Slot.PIXELS, rgb.capacity());
          rgb.get(0, pixels, 0, rgb.capacity());
          return new DecodedImage(pixels, width, height);
        });
  }

  /** What to do with decoded pixels while the decoder's buffer holds them. */
  @FunctionalInterface
  interface PixelsUse<T> {
    /**
     * {@code rgb}: {@code width * height * 3} bytes from position 0; valid only during the call.
     */
    T use(ByteBuffer rgb, int width, int height) throws ImageException;
  }

  /**
   * Decodes as {@link #decode} into the decoder's own (native, per-thread, reused) buffer and calls
   * {@code use} on it, without copying the pixels out: the caller reads what it needs.
   */
  static <T> T decodeWith(
      byte[] data,
      int offset,
      int length,
      DecodeCost headers,
      int reduce,
      DecodeScratch scratch,
      PixelsUse<T> use)
      throws ImageException {
    ImageInfo info = headers.info();
    if (info.format() == ImageFormat.JPEG) {
      JpegScanCheck.requireEndOfImage(data, offset, length, headers.firstScan());
    }
    headers.verify(data, offset, length);
    RgbConversion conversion = headers.conversion();
    BytePointer encoded = scratch.encoded(data, offset, length);
    try (Mat buffer = new Mat(1, length, CV_8UC1, encoded)) {
      Mat image;
      try {
        image =
            opencv_imgcodecs.imdecode(
                buffer, conversion.flags() | reducedFlag(info, reduce), scratch.decoded());
      } catch (RuntimeException e) {
        throw new ImageException("Cannot decode " + info.format() + ": " + e.getMessage(), e);
      }
      try (image) {
        int width = requireDecoded(image, headers, reduce, conversion);
        int height = image.rows();
        ByteBuffer rgb = conversion.apply(image, width, height, scratch);
        if (info.format() == ImageFormat.JPEG
            && GreyTail.suspect(rgb, width, height, reduce, info.channels())) {
          JpegScanCheck.requireCompleteScans(data, offset, length, headers.frame());
        }
        return use.use(rgb, width, height);
      }
    }
  }

  /**
   * Refuses an empty result, one of another type than {@code conversion} reads, or of another size
   * than the headers declare at {@code 1 / reduce} scale (libjpeg's, rounded up); returns its
   * width.
   */
  private static int requireDecoded(
      Mat image, DecodeCost headers, int reduce, RgbConversion conversion) throws ImageException {
    ImageFormat format = headers.info().format();
    if (image == null || image.isNull() || image.empty()) {
      throw new ImageException("Cannot decode " + format + ": corrupt or truncated data");
    }
    if (!conversion.accepts(image.type()) || !image.isContinuous()) {
      throw new ImageException(
          "Cannot decode " + format + ": unexpected decoder output type " + image.type());
    }
    int width = (headers.decodedWidth() + reduce - 1) / reduce;
    int height = (headers.decodedHeight() + reduce - 1) / reduce;
    if (image.cols() != width || image.rows() != height) {
      throw new ImageException(
          String.format(
              "Corrupt %s: its headers declare %dx%d but it decodes as %dx%d",
              format, width, height, image.cols(), image.rows()));
    }
    return width;
  }

  private static int reducedFlag(ImageInfo info, int reduce) {
    if (info.format() != ImageFormat.JPEG) {
      return 0;
    }
    // The REDUCED_GRAYSCALE bits carry only the scale; IMREAD_COLOR_RGB still picks RGB output
    // (REDUCED_COLOR would add the BGR bit, which OpenCV refuses together with RGB).
    return switch (reduce) {
      case 1 -> 0;
      case 2 -> opencv_imgcodecs.IMREAD_REDUCED_GRAYSCALE_2;
      case 4 -> opencv_imgcodecs.IMREAD_REDUCED_GRAYSCALE_4;
      case 8 -> opencv_imgcodecs.IMREAD_REDUCED_GRAYSCALE_8;
      default -> throw new IllegalArgumentException("Invalid reduce: " + reduce + " (1, 2, 4, 8)");
    };
  }
}
