package dev.spindle.spark.preprocess;

import dev.spindle.spark.config.Settings;
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
 * @param sample the settings every job's sample path shares, rows per Arrow record batch included
 * @param partitionBytes whole shards are grouped into one partition up to this many bytes
 * @param folderShardFiles files of an image-folder tree per shard
 * @param format the output's file format
 */
record PreprocessSettings(
    SampleSettings sample, long partitionBytes, int folderShardFiles, OutputFormat format)
    implements Serializable {

  static PreprocessSettings from(Settings conf) {
    if (conf.get(SpindleConfig.BATCH_TOKENS) > 0) {
      throw new IllegalArgumentException(
          "spark.spindle.batchTokens (--batch-tokens) packs the batches of feed and train;"
              + " preprocess writes every sample once and is not batched by tokens: unset it");
    }
    return new PreprocessSettings(
        SampleSettings.from(conf, BatchImages.decoding(conf.uint8Transform())),
        conf.get(SpindleConfig.PARTITION_BYTES),
        conf.get(SpindleConfig.FOLDER_SHARD_FILES),
        conf.get(SpindleConfig.OUTPUT_FORMAT));
  }

  /** {@link #from(Settings)} of what {@code conf} gives ({@link Settings#read}). */
  static PreprocessSettings from(Map<String, String> conf) {
    return from(Settings.read(conf));
  }

  /**
   * The settings for {@code manifest}'s input: a preprocess output's rows are copied as stored
   * (their shape and transforms kept), never decoded again.
   *
   * @throws IllegalArgumentException when image settings disagree with the stored images
   */
  PreprocessSettings forInput(Manifest manifest, Settings conf) {
    return new PreprocessSettings(
        sample.withImages(BatchImages.of(manifest.stored(), conf, manifest.input())),
        partitionBytes,
        folderShardFiles,
        format);
  }

  /**
   * Whether samples carry an image ({@code dev.spindle.spark.batch.FieldSet#hasImage}): without,
   * nothing is decoded and the output has no {@code image} column nor image shape.
   */
  boolean hasImage() {
    return sample.limits().fields().hasImage();
  }

  /** Rows per Arrow record batch ({@link SampleSettings#batchSize}). */
  int batchSize() {
    return sample.batchSize();
  }
}
