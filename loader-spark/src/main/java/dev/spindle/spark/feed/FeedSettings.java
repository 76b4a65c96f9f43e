package dev.spindle.spark.feed;

import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.shard.SampleLimits;
import java.io.Serializable;
import java.util.Map;

/** What every feed task needs to know, read once on the driver from the configuration. */
record FeedSettings(
    ImageTransform transform,
    SampleLimits limits,
    int threads,
    long arrowLimit,
    int readBatches,
    long testDelayMs)
    implements Serializable {

  static FeedSettings from(Map<String, String> conf) {
    return new FeedSettings(
        SpindleConfig.uint8Transform(conf),
        SpindleConfig.sampleLimits(conf),
        SpindleConfig.get(conf, SpindleConfig.THREADS),
        SpindleConfig.get(conf, SpindleConfig.ARROW_MEMORY_LIMIT),
        SpindleConfig.get(conf, SpindleConfig.FEED_READ_BATCHES),
        SpindleConfig.get(conf, SpindleConfig.FEED_TEST_DELAY_MS));
  }
}
