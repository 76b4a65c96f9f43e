package dev.spindle.spark.image;

import java.lang.management.ManagementFactory;

/**
 * What readying a cold JVM's decode path costs, one step after the other: loading the native JPEG
 * decoder ({@link ImageTransform#loadDecoders}, what {@code DecodeWarmUp} does before a trainer's
 * first batch), loading OpenCV, and compiling the vector resample ({@link VectorPath#warmUpNow},
 * what {@link ImageTransform#preload} adds and what a loader's first decode starts in the
 * background): for each, wall seconds and the process's CPU seconds (all its threads: the compilers
 * and the collector with the step's own). Run in a fresh JVM with the launcher's flags (the JIT's
 * thresholds change the last step's cost). A benchmark: it reports, it asserts nothing.
 */
public final class WarmUpCost {
  private WarmUpCost() {}

  public static void main(String[] args) throws Exception {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu = os.getProcessCpuTime();
    long wall = System.nanoTime();
    String[] names = {"native JPEG decoder", "OpenCV", "vector resample warm-up"};
    for (int step = 0; step < names.length; step++) {
      switch (step) {
        case 0 -> ImageTransform.loadDecoders();
        case 1 -> OpenCvDecoder.load();
        default -> VectorPath.warmUpNow();
      }
      long c = os.getProcessCpuTime();
      long w = System.nanoTime();
      System.out.printf(
          "%s: %.2f s wall, %.2f s of process CPU%n",
          names[step], (w - wall) / 1e9, (c - cpu) / 1e9);
      cpu = c;
      wall = w;
    }
  }
}
