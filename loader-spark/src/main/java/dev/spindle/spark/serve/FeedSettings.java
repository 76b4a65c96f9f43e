package dev.spindle.spark.serve;

import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.SampleSettings;
import dev.spindle.spark.shard.IoSettings;
import dev.spindle.spark.shard.TarIndexes;
import java.io.Serializable;
import java.util.Map;

/**
 * What every feed task needs to know, read once on the driver from the configuration and the
 * input's manifest (which says whether the images are decoded or stored: {@link BatchImages}).
 *
 * @param sample the settings every job's sample path shares
 * @param readBatches {@code spark.spindle.feed.readBatches}
 * @param io how shards are read from storage ({@code spark.spindle.io.*}), and where the input's
 *     tar shards' member indexes are ({@link #withIndexes})
 */
public record FeedSettings(SampleSettings sample, int readBatches, IoSettings io)
    implements Serializable {

  /**
   * Whether the feed's samples have an image: false when the declared fields ({@code
   * spark.spindle.fields}) have none (e.g. pre-tokenised text); nothing is then decoded and the
   * batches carry label, key, index and the fields.
   */
  public boolean hasImage() {
    return sample.limits().fields().hasImage();
  }

  /** Settings that read every shard in order (no member indexes). */
  public FeedSettings(SampleSettings sample, int readBatches) {
    this(sample, readBatches, IoSettings.SEQUENTIAL);
  }

  /**
   * @throws IllegalArgumentException when image settings disagree with a preprocessed input's
   *     stored images (before any task)
   */
  public static FeedSettings from(Settings conf, Manifest manifest) {
    return new FeedSettings(
        SampleSettings.from(conf, BatchImages.of(manifest.stored(), conf, manifest.input())),
        conf.get(SpindleConfig.FEED_READ_BATCHES),
        new IoSettings(
            conf.get(SpindleConfig.IO_INDEX),
            conf.get(SpindleConfig.IO_COALESCE_BYTES),
            conf.get(SpindleConfig.IO_CONCURRENCY),
            null));
  }

  /**
   * These settings with the input's member indexes at {@code where} ({@code
   * ManifestCache.Loaded.indexes()}; null: none).
   */
  public FeedSettings withIndexes(TarIndexes where) {
    return new FeedSettings(sample, readBatches, io.withIndexes(where));
  }

  /** {@link #from(Settings, Manifest)} of what {@code conf} gives ({@link Settings#read}). */
  public static FeedSettings from(Map<String, String> conf, Manifest manifest) {
    return from(Settings.read(conf), manifest);
  }
}
