package dev.spindle.spark.preprocess;

import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.SampleSettings;
import dev.spindle.spark.sink.OutputFormat;
import java.io.Serializable;
import java.util.Map;

/**
 * What every preprocess task needs to know, read once on the driver from the configuration; the
 * images are decoded by the configured transform until {@link #forInput} sees a preprocess output.
 *
 * @param sample the settings every job's sample path shares
 * @param batchSize rows per Arrow record batch
 * @param partitionBytes whole shards are grouped into one partition up to this many bytes
 * @param folderShardFiles files of an image-folder tree per shard
 * @param format the output's file format
 */
record PreprocessSettings(
    SampleSettings sample,
    int batchSize,
    long partitionBytes,
    int folderShardFiles,
    OutputFormat format)
    implements Serializable {

  static PreprocessSettings from(Map<String, String> conf) {
    return new PreprocessSettings(
        SampleSettings.from(conf, BatchImages.decoding(SpindleConfig.uint8Transform(conf))),
        SpindleConfig.get(conf, SpindleConfig.BATCH_SIZE),
        SpindleConfig.get(conf, SpindleConfig.PARTITION_BYTES),
        SpindleConfig.get(conf, SpindleConfig.FOLDER_SHARD_FILES),
        SpindleConfig.get(conf, SpindleConfig.OUTPUT_FORMAT));
  }

  /**
   * The settings for {@code manifest}'s input: a preprocess output's rows are copied as stored
   * (their shape and transforms kept), never decoded again.
   *
   * @throws IllegalArgumentException when image settings disagree with the stored images
   */
  PreprocessSettings forInput(Manifest manifest, Map<String, String> conf) {
    return new PreprocessSettings(
        sample.withImages(BatchImages.of(manifest.stored(), conf, manifest.input())),
        batchSize,
        partitionBytes,
        folderShardFiles,
        format);
  }
}
