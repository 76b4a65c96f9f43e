package dev.spindle.spark.fuzz;

/**
 * A target that fails on any input of 3 bytes or more: FuzzSuite fuzzes it to prove that the
 * harness reports a crash (count, input file, exit code) and so that a green fuzz run means
 * something. Not in {@link FuzzTarget#ALL}.
 */
public final class CrashingFuzz {
  private CrashingFuzz() {}

  public static void fuzzerTestOneInput(byte[] data) {
    if (data.length >= 3) {
      throw new IllegalStateException("self-check: an input of " + data.length + " bytes");
    }
  }
}
