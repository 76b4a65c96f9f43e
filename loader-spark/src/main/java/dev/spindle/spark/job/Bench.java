package dev.spindle.spark.job;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Map;

/** {@code bench pipeline|images|feeder}: hands the flags to the benchmark's own main. */
final class Bench {
  private static final Map<String, String> MAINS =
      Map.of(
          "pipeline", "dev.spindle.spark.pipeline.PipelineBench",
          "images", "dev.spindle.spark.image.ImageBench",
          "feeder", "dev.spindle.gpu.feed.FeederBench");

  private Bench() {}

  static void run(String[] argv) throws Exception {
    if (argv.length == 0 || !MAINS.containsKey(argv[0])) {
      throw new Args.UsageException("bench needs one of " + MAINS.keySet());
    }
    Class<?> main;
    try {
      main = Class.forName(MAINS.get(argv[0]));
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("Benchmark '" + argv[0] + "' is not part of this build", e);
    }
    Method m = main.getMethod("main", String[].class);
    m.invoke(null, (Object) Arrays.copyOfRange(argv, 1, argv.length));
  }
}
