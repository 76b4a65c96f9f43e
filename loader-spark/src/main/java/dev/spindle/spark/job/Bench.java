package dev.spindle.spark.job;

import dev.spindle.gpu.feed.FeederBench;
import dev.spindle.spark.image.ImageBench;
import dev.spindle.spark.pipeline.PipelineBench;
import dev.spindle.spark.sql.DataSourceBench;
import java.util.Arrays;

/**
 * {@code bench pipeline|images|feeder|datasource}: hands the remaining flags to the benchmark's
 * own main.
 */
final class Bench {
  private Bench() {}

  static void run(String[] argv) throws Exception {
    String which = argv.length == 0 ? "" : argv[0];
    String[] rest = argv.length == 0 ? argv : Arrays.copyOfRange(argv, 1, argv.length);
    switch (which) {
      case "pipeline" -> PipelineBench.main(rest);
      case "images" -> ImageBench.main(rest);
      case "feeder" -> FeederBench.main(rest);
      case "datasource" -> DataSourceBench.main(rest);
      default -> throw new Args.UsageException(
          "bench needs one of pipeline, images, feeder, datasource");
    }
  }
}
