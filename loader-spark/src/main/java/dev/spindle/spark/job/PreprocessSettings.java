package dev.spindle.spark.job;

import dev.spindle.spark.config.FailureBudget;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.shard.SampleLimits;
import dev.spindle.spark.sink.OutputFormat;
import java.io.Serializable;
import java.util.Map;

/** What every preprocess task needs to know, read once on the driver from the configuration. */
record PreprocessSettings(
    ImageTransform transform,
    int batchSize,
    SampleLimits limits,
    int threads,
    long arrowLimit,
    long partitionBytes,
    int folderShardFiles,
    FailureBudget budget,
    OutputFormat format)
    implements Serializable {

  static PreprocessSettings from(Map<String, String> conf) {
    return new PreprocessSettings(
        SpindleConfig.uint8Transform(conf),
        SpindleConfig.get(conf, SpindleConfig.BATCH_SIZE),
        SpindleConfig.sampleLimits(conf),
        SpindleConfig.get(conf, SpindleConfig.THREADS),
        SpindleConfig.get(conf, SpindleConfig.ARROW_MEMORY_LIMIT),
        SpindleConfig.get(conf, SpindleConfig.PARTITION_BYTES),
        SpindleConfig.get(conf, SpindleConfig.FOLDER_SHARD_FILES),
        FailureBudget.parse(
            SpindleConfig.get(conf, SpindleConfig.MAX_FAILURES),
            SpindleConfig.get(conf, SpindleConfig.MAX_FAILURES_MIN_SAMPLES)),
        SpindleConfig.get(conf, SpindleConfig.OUTPUT_FORMAT));
  }
}
