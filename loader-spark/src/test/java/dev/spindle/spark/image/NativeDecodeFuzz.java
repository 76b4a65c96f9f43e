package dev.spindle.spark.image;

import dev.spindle.spark.fuzz.FuzzTarget;

/**
 * Fuzz target: the full decode entry with Spindle's native libjpeg-turbo region decoder ({@link
 * NativeJpeg}) for JPEGs (PNGs go to OpenCV). See {@link DecodeFuzz}.
 */
public final class NativeDecodeFuzz {
  private NativeDecodeFuzz() {}

  /** Whether the native decoder loaded here; without it this target tests OpenCV only. */
  public static boolean available() {
    return NativeJpeg.AVAILABLE;
  }

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("decode-native", NativeDecodeFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) {
    DecodeFuzz.run(data, true);
  }
}
