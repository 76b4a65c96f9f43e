package dev.spindle.spark.samples;

import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.shard.SampleLimits;
import java.io.Serializable;
import java.util.List;
import java.util.Map;

/**
 * The settings of the sample path that every job running it shares ({@code preprocess}, {@code
 * feed}, the {@code spindle} data source), read once on the driver from the {@code spark.spindle.*}
 * keys ({@link #from}) and shipped to the executors inside the job's own settings. Immutable.
 *
 * @param images how rows get their pixels: the configured decode and transform, or a preprocess
 *     output's stored images (copied as they are)
 * @param batchSize rows per batch ({@code spark.spindle.batchSize}): the one place any job reads it
 *     (a feed's plan takes it from here unless a resumed state fixes it)
 * @param limits what a shard reader accepts in one sample ({@code spark.spindle.maxSampleBytes},
 *     {@code spark.spindle.numClasses})
 * @param threads {@code spark.spindle.threads}; 0 = the executor's pool ({@link #threadsPerTask})
 * @param arrowLimit byte limit of the executor's Arrow allocator ({@code
 *     spark.spindle.memory.arrowLimit})
 * @param budget the failure budget ({@code spark.spindle.maxFailures}, {@code
 *     spark.spindle.maxFailures.minSamples})
 */
public record SampleSettings(
    BatchImages images,
    int batchSize,
    SampleLimits limits,
    int threads,
    long arrowLimit,
    FailureBudget budget)
    implements Serializable {

  /**
   * Reads the shared keys from {@code conf} (full key names); {@code images} come from the job,
   * which knows its input.
   *
   * @throws IllegalArgumentException naming the key when a value is invalid
   */
  public static SampleSettings from(Settings conf, BatchImages images) {
    return new SampleSettings(
        images,
        conf.get(SpindleConfig.BATCH_SIZE),
        conf.sampleLimits(),
        conf.get(SpindleConfig.THREADS),
        conf.get(SpindleConfig.ARROW_MEMORY_LIMIT),
        conf.failureBudget());
  }

  /** {@link #from(Settings, BatchImages)} of what {@code conf} gives ({@link Settings#read}). */
  public static SampleSettings from(Map<String, String> conf, BatchImages images) {
    return from(Settings.read(conf), images);
  }

  /**
   * Decodes one task keeps in flight for each CPU thread it may use: in input order a finished
   * image waits for every earlier one, so a few per thread keep a thread from idling behind a
   * slower image ({@code bench images} runs its path with as many).
   */
  public static final int IN_FLIGHT_PER_THREAD = 4;

  /**
   * The one rule for a task's share of the executor-wide CPU pool, the same for {@code preprocess},
   * {@code feed}, {@code train} and the {@code spindle} data source: {@code spark.spindle.threads}
   * threads when it is set (above 0), never more than the pool has; else the whole pool. (The pool
   * itself has {@code spark.spindle.threads} threads when the executor's configuration sets it,
   * else the executor's cores: {@code dev.spindle.spark.pipeline.ExecutorPools}.)
   *
   * @param poolThreads threads of the executor-wide CPU pool
   */
  public static int threadsPerTask(int configured, int poolThreads) {
    return configured > 0 ? Math.min(configured, poolThreads) : poolThreads;
  }

  /**
   * How many of a task's samples its sample path decodes at once on a pool of {@code poolThreads}
   * threads: {@link #IN_FLIGHT_PER_THREAD} for each of its {@link #threadsPerTask} threads (the
   * {@link PathSpec#concurrency()} of every job's path). Any thread.
   */
  public int decodesInFlight(int poolThreads) {
    return IN_FLIGHT_PER_THREAD * threadsPerTask(threads, poolThreads);
  }

  /** {@link #decodesInFlight(int)} on this executor JVM's pool; a task thread calls it. */
  public int decodesInFlight() {
    return decodesInFlight(SamplePath.cpuThreads());
  }

  /**
   * The extra fields every batch of the job carries after {@code index} ({@code
   * spark.spindle.fields}), in declaration order; empty without a declaration.
   */
  public List<FieldSpec> extras() {
    return limits.fields().extras();
  }

  /** The same settings with other images (e.g. a preprocess output's stored ones). */
  public SampleSettings withImages(BatchImages other) {
    return new SampleSettings(other, batchSize, limits, threads, arrowLimit, budget);
  }
}
