package dev.spindle.spark.image;

import dev.spindle.spark.fuzz.FuzzTarget;

/**
 * Fuzz target: the full decode entry with OpenCV's decoder (the fallback). See {@link DecodeFuzz}.
 */
public final class OpenCvDecodeFuzz {
  private OpenCvDecodeFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("decode-opencv", OpenCvDecodeFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) {
    DecodeFuzz.run(data, false);
  }
}
