package dev.spindle.spark.progress;

import java.io.Serializable;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.util.LongAccumulator;

/**
 * What a job's tasks have done so far, as named Spark accumulators the driver sees while tasks run
 * (executor heartbeats) and when they end: samples handled (delivered or quarantined), encoded
 * bytes read, samples quarantined. Created on the driver, shipped inside a task; {@link #add} is
 * called on executor task threads (one thread per task copy), usually through a {@link
 * TaskProgress}. With them, each stage's busy and elapsed time ({@link StageTimes}), from which the
 * driver names the bottleneck. Also shown on the UI's stage pages.
 */
public final class ProgressCounters implements Serializable {
  /** The accumulators' names, as {@link ProgressListener} looks them up. */
  static final String SAMPLES = "spindle.samples";

  static final String BYTES = "spindle.bytes";
  static final String QUARANTINED = "spindle.quarantined";

  private final LongAccumulator samples;
  private final LongAccumulator bytes;
  private final LongAccumulator quarantined;
  private final StageTimes stages = new StageTimes();

  private ProgressCounters(SparkContext sc) {
    samples = sc.longAccumulator(SAMPLES);
    bytes = sc.longAccumulator(BYTES);
    quarantined = sc.longAccumulator(QUARANTINED);
    sc.register(stages, StageTimes.NAME);
  }

  /** New counters registered with {@code sc}; driver thread. */
  public static ProgressCounters register(SparkContext sc) {
    return new ProgressCounters(sc);
  }

  /** Adds a task's latest work: {@code samples} handled, of them {@code quarantined} dropped. */
  public void add(long samples, long bytes, long quarantined) {
    this.samples.add(samples);
    this.bytes.add(bytes);
    this.quarantined.add(quarantined);
  }

  /** Adds a task's latest stage times: {@code name -> {busyMs, elapsedMs}}. */
  public void addStages(Map<String, long[]> times) {
    stages.add(times);
  }

  /**
   * This copy's samples so far: on the driver, those of the tasks that ended; in a task (or when a
   * task runs where the counters were made, as tests do), what it added so far.
   */
  public long samples() {
    return samples.sum();
  }

  /** This copy's quarantined samples so far (see {@link #samples()}). */
  public long quarantined() {
    return quarantined.sum();
  }

  /** This copy's stage times so far: {@code name -> {busyMs, elapsedMs}} (a copy). */
  public Map<String, long[]> stages() {
    return stages.value();
  }
}
