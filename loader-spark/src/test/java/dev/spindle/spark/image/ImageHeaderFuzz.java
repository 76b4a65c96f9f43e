package dev.spindle.spark.image;

import dev.spindle.spark.fuzz.FuzzTarget;

/**
 * Fuzz target of the image header parsers: the JPEG marker walk and PNG IHDR ({@link
 * ImageInfo#probe}), EXIF orientation ({@link HeaderProbe#jpegOrientation}), the headers the decode
 * cost is computed from ({@link DecodeCost#of}: JPEG frame and scan headers, PNG chunks) and the
 * entropy-coded data check ({@link JpegScanCheck}). The input is an encoded image. The property:
 * each returns or throws {@link ImageException}, its documented refusal; none allocates in
 * proportion to the dimensions the header declares.
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
    if (info.format() == ImageFormat.JPEG) {
      int o = HeaderProbe.jpegOrientation(data, 0, data.length);
      if (o < 1 || o > 8) {
        throw new IllegalStateException("orientation " + o);
      }
    }
    try {
      DecodeCost cost = DecodeCost.of(info, data, 0, data.length);
      if (cost.frame() != null) {
        JpegScanCheck.problem(data, 0, data.length, cost.frame());
      }
    } catch (ImageException e) {
      // refused from its headers
    }
  }
}
