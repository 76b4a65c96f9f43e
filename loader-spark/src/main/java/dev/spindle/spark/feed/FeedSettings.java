package dev.spindle.spark.feed;

import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.shard.Manifest;
import dev.spindle.spark.shard.SampleLimits;
import java.io.Serializable;
import java.util.Map;

/**
 * What every feed task needs to know, read once on the driver from the configuration and the
 * input's manifest (which says whether the images are decoded or stored: {@link BatchImages}).
 */
record FeedSettings(
    BatchImages images,
    SampleLimits limits,
    int threads,
    long arrowLimit,
    int readBatches,
    long testDelayMs)
    implements Serializable {

  /**
   * @throws IllegalArgumentException when image settings disagree with a preprocessed input's
   *     stored images (before any task)
   */
  static FeedSettings from(Map<String, String> conf, Manifest manifest) {
    return new FeedSettings(
        BatchImages.of(manifest.stored(), conf, manifest.input()),
        SpindleConfig.sampleLimits(conf),
        SpindleConfig.get(conf, SpindleConfig.THREADS),
        SpindleConfig.get(conf, SpindleConfig.ARROW_MEMORY_LIMIT),
        SpindleConfig.get(conf, SpindleConfig.FEED_READ_BATCHES),
        SpindleConfig.get(conf, SpindleConfig.FEED_TEST_DELAY_MS));
  }
}
