package dev.spindle.spark.image;

import dev.spindle.spark.fuzz.FuzzTarget;

/**
 * Fuzz target of the image header parsers: the JPEG marker walk, PNG IHDR and the BMP, PNM, TIFF,
 * WebP and GIF headers ({@link ImageInfo#probe}, {@link FormatHeader}), EXIF orientation (a JPEG's
 * APP1, a PNG's eXIf, a WebP's EXIF chunk: {@link DecodeCost#orientation}), the headers the decode
 * cost is computed from ({@link DecodeCost#of}: JPEG frame and scan headers, PNG chunks, each
 * format's data checks), the entropy-coded data check ({@link JpegScanCheck}) and a TIFF's strip
 * check ({@link TiffStripCheck}, through {@link DecodeCost#verify}). The input is an encoded image.
 * The property: each returns or throws {@link ImageException}, its documented refusal; none
 * allocates in proportion to the dimensions the header declares.
 */
public final class ImageHeaderFuzz {
  private ImageHeaderFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("image-header", ImageHeaderFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) {
    ImageInfo info;
    try {
      info = ImageInfo.probe(data, 0, data.length);
    } catch (ImageException e) {
      return;
    }
    // both read any data a probe accepts, whether or not its decode cost is refused
    if (info.format() == ImageFormat.JPEG) {
      checkOrientation(HeaderProbe.jpegOrientation(data, 0, data.length));
    } else if (info.format() == ImageFormat.PNG) {
      checkOrientation(PngHeader.orientation(data, 0, data.length));
    }
    try {
      DecodeCost cost = DecodeCost.of(info, data, 0, data.length);
      checkOrientation(cost.orientation(data, 0, data.length));
      if (cost.frame() != null) {
        JpegScanCheck.problem(data, 0, data.length, cost.frame());
      }
      cost.verify(data, 0, data.length);
    } catch (ImageException e) {
      // refused from its headers
    }
  }

  private static void checkOrientation(int o) {
    if (o < 1 || o > 8) {
      throw new IllegalStateException("orientation " + o);
    }
  }
}
