package dev.spindle.spark.sql;

import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.plan.MixSpec;
import dev.spindle.spark.plan.PlanSpec;
import dev.spindle.spark.plan.Remainder;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.SampleSettings;
import dev.spindle.spark.shard.ParquetColumns;
import dev.spindle.spark.shard.StoredImages;
import java.io.Serializable;

/**
 * Everything a scan of the {@code spindle} data source needs, resolved once on the driver from its
 * options and the session's configuration ({@link ScanOptions}) and shipped to executors.
 * Immutable.
 *
 * @param input the URI to read
 * @param decode true: decoded, transformed uint8 images; false: the image files' bytes
 * @param quarantine where each task lists its quarantined samples as JSON lines, or null
 * @param manifest the manifest cache file, or null for the default beside the data
 * @param sample the settings every job's sample path shares; its images are the decode and
 *     transform (also when not decoding: they are checked all the same) or, for a preprocess
 *     output, its stored images (copied as they are); its batch size is the rows per columnar
 *     batch; its threads set each task's share of the executor's CPU pool ({@link
 *     SampleSettings#decodesInFlight}); its budget applies to each partition
 * @param partitionBytes whole shards are grouped into one partition up to this many bytes
 * @param folderShardFiles files of an image-folder tree per shard
 * @param columns the columns of a Parquet input holding the image and the label
 * @param mix the mixture to read one epoch of (option {@code mix}), or null for the one input
 */
record ScanSettings(
    String input,
    boolean decode,
    String quarantine,
    String manifest,
    SampleSettings sample,
    long partitionBytes,
    int folderShardFiles,
    ParquetColumns columns,
    MixScan mix)
    implements Serializable {

  /**
   * A mixture's scan: its sources ({@code spark.spindle.mix}, {@code spark.spindle.mix.epoch}) and
   * the plan whose epoch it reads (seed and shuffle window from the settings, epoch 0, one rank,
   * batches of one sample).
   */
  record MixScan(MixSpec spec, PlanSpec plan) implements Serializable {
    static MixScan of(Settings conf) {
      return new MixScan(
          MixSpec.parse(conf.get(SpindleConfig.MIX), conf.get(SpindleConfig.MIX_EPOCH)),
          new PlanSpec(
              conf.get(SpindleConfig.SEED),
              0,
              1,
              1,
              Remainder.DROP_LAST,
              conf.get(SpindleConfig.SHUFFLE_WINDOW)));
    }
  }

  /**
   * Reads the {@code spark.spindle.*} settings from {@code conf} (full key names).
   *
   * @param stored the input's stored images when it is a preprocess output, else null
   * @throws IllegalArgumentException for an invalid value, or image settings that disagree with the
   *     stored images
   */
  static ScanSettings of(
      String input,
      boolean decode,
      String quarantine,
      String manifest,
      Settings conf,
      StoredImages stored) {
    return of(input, decode, quarantine, manifest, conf, stored, false);
  }

  /**
   * {@link #of(String, boolean, String, String, Settings, StoredImages)} of one input, or, when
   * {@code mixture}, of one epoch of the mixture {@code conf} sets ({@code spark.spindle.mix}).
   */
  static ScanSettings of(
      String input,
      boolean decode,
      String quarantine,
      String manifest,
      Settings conf,
      StoredImages stored,
      boolean mixture) {
    return new ScanSettings(
        input,
        decode,
        quarantine,
        manifest,
        SampleSettings.from(conf, BatchImages.of(stored, conf, input)),
        conf.get(SpindleConfig.PARTITION_BYTES),
        conf.get(SpindleConfig.FOLDER_SHARD_FILES),
        conf.parquetColumns(),
        mixture ? MixScan.of(conf) : null);
  }

  /**
   * Whether samples have an image (the declared fields have one, or none are declared): without,
   * nothing is decoded and the columns have no image ({@link ScanSchema}).
   */
  boolean images() {
    return sample.limits().fields().hasImage();
  }

  /** Whether the scan decodes images: asked to ({@code decode}) and there are images. */
  boolean decodes() {
    return decode && images();
  }

  /** Rows per columnar batch ({@link SampleSettings#batchSize}). */
  int batchSize() {
    return sample.batchSize();
  }
}
