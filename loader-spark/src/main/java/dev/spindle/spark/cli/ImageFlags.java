package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import picocli.CommandLine.Option;

/** Flags of the image jobs that stand for configuration keys (checked by the keys' own rules). */
final class ImageFlags {
  @Option(
      names = "--size",
      paramLabel = "PIXELS",
      description =
          "Output image side: resize the short side, centre-crop"
              + " (spark.spindle.image.size; default ${bundle:spark.spindle.image.size})")
  String size;

  @Option(
      names = "--batch-size",
      paramLabel = "ROWS",
      description =
          "Rows per batch (spark.spindle.batchSize; default"
              + " ${bundle:spark.spindle.batchSize})")
  String batchSize;

  @Option(
      names = "--threads",
      paramLabel = "N",
      description =
          "CPU threads of the executor-wide pool, and the most of them one task decodes on"
              + " (spark.spindle.threads; 0, the default: the executor's cores)")
  String threads;

  void putInto(JobConf conf) {
    conf.flag("--size", size, SpindleConfig.IMAGE_SIZE.key());
    conf.flag("--batch-size", batchSize, SpindleConfig.BATCH_SIZE.key());
    conf.flag("--threads", threads, SpindleConfig.THREADS.key());
  }
}
