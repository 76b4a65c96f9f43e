package dev.spindle.spark.samples;

import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.shard.SampleLimits;
import java.io.Serializable;
import java.util.Map;

/**
 * The settings of the sample path that every job running it shares ({@code preprocess}, {@code
 * feed}, the {@code spindle} data source), read once on the driver from the {@code spark.spindle.*}
 * keys ({@link #from}) and shipped to the executors inside the job's own settings. Immutable.
 *
 * @param images how rows get their pixels: the configured decode and transform, or a preprocess
 *     output's stored images (copied as they are)
 * @param limits what a shard reader accepts in one sample ({@code spark.spindle.maxSampleBytes},
 *     {@code spark.spindle.numClasses})
 * @param threads {@code spark.spindle.threads}; 0 = the executor's pool
 * @param arrowLimit byte limit of the executor's Arrow allocator ({@code
 *     spark.spindle.memory.arrowLimit})
 * @param budget the failure budget ({@code spark.spindle.maxFailures}, {@code
 *     spark.spindle.maxFailures.minSamples})
 */
public record SampleSettings(
    BatchImages images, SampleLimits limits, int threads, long arrowLimit, FailureBudget budget)
    implements Serializable {

  /**
   * Reads the shared keys from {@code conf} (full key names); {@code images} come from the job,
   * which knows its input.
   *
   * @throws IllegalArgumentException naming the key when a value is invalid
   */
  public static SampleSettings from(Map<String, String> conf, BatchImages images) {
    return new SampleSettings(
        images,
        SpindleConfig.sampleLimits(conf),
        SpindleConfig.get(conf, SpindleConfig.THREADS),
        SpindleConfig.get(conf, SpindleConfig.ARROW_MEMORY_LIMIT),
        SpindleConfig.failureBudget(conf));
  }

  /** The same settings with other images (e.g. a preprocess output's stored ones). */
  public SampleSettings withImages(BatchImages other) {
    return new SampleSettings(other, limits, threads, arrowLimit, budget);
  }
}
