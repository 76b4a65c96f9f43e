package dev.spindle.spark.job;

import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.shard.Manifest;
import dev.spindle.spark.shard.SampleLimits;
import dev.spindle.spark.sink.OutputFormat;
import java.io.Serializable;
import java.util.Map;

/**
 * What every preprocess task needs to know, read once on the driver from the configuration; the
 * images are decoded by the configured transform until {@link #forInput} sees a preprocess output.
 */
record PreprocessSettings(
    BatchImages images,
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
        BatchImages.decoding(SpindleConfig.uint8Transform(conf)),
        SpindleConfig.get(conf, SpindleConfig.BATCH_SIZE),
        SpindleConfig.sampleLimits(conf),
        SpindleConfig.get(conf, SpindleConfig.THREADS),
        SpindleConfig.get(conf, SpindleConfig.ARROW_MEMORY_LIMIT),
        SpindleConfig.get(conf, SpindleConfig.PARTITION_BYTES),
        SpindleConfig.get(conf, SpindleConfig.FOLDER_SHARD_FILES),
        SpindleConfig.failureBudget(conf),
        SpindleConfig.get(conf, SpindleConfig.OUTPUT_FORMAT));
  }

  /**
   * The settings for {@code manifest}'s input: a preprocess output's rows are copied as stored
   * (their shape and transforms kept), never decoded again.
   *
   * @throws IllegalArgumentException when image settings disagree with the stored images
   */
  PreprocessSettings forInput(Manifest manifest, Map<String, String> conf) {
    return new PreprocessSettings(BatchImages.of(manifest.stored(), conf, manifest.input()),
        batchSize, limits, threads, arrowLimit, partitionBytes, folderShardFiles, budget, format);
  }
}
