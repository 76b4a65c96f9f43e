package dev.spindle.spark.progress;

import dev.spindle.spark.pipeline.PipelineStats;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One task's side of {@link ProgressCounters}: the task reports its running totals, this adds what
 * grew since the last report, and its pipeline's stage times ({@link StageTimes}) at most every
 * quarter second. Totals only grow: a report below an earlier one (the task thread's count of
 * delivered rows after the sample path's count of produced ones) adds nothing. Reports come from
 * the task thread and from the sample path's statistics thread (so that the count moves per sample
 * while the task thread waits for a whole batch or for its consumer); they are serialised here, the
 * only writer of the task's counters. A tracker of null counters does nothing.
 */
public final class TaskProgress {
  private static final long STAGE_PERIOD_NANOS = 250_000_000L;

  private final ProgressCounters counters;
  private final String sink;
  private long samples;
  private long bytes;
  private long quarantined;
  private Map<String, long[]> stages = Map.of();
  private long stagesAt;

  /** {@code counters}: the job's, or null when no one watches. */
  public TaskProgress(ProgressCounters counters) {
    this(counters, StageTimes.SINK);
  }

  /**
   * {@code sink}: what the pipeline's consumer stage is called in the stage times, e.g. {@code
   * trainer} when the task's consumer waits for trainers (the report keeps the pipeline's name).
   */
  public TaskProgress(ProgressCounters counters, String sink) {
    this.counters = counters;
    this.sink = sink;
  }

  /**
   * The task's totals so far: {@code samplesNow} handled (produced, delivered or quarantined),
   * {@code bytesNow} read, {@code quarantinedNow} of them quarantined, and its pipeline's
   * statistics (asked for only when due, or when {@code last}). Any thread.
   */
  public synchronized void update(
      long samplesNow,
      long bytesNow,
      long quarantinedNow,
      Supplier<PipelineStats> stats,
      boolean last) {
    if (counters == null) {
      return;
    }
    counters.add(
        Math.max(0, samplesNow - samples),
        Math.max(0, bytesNow - bytes),
        Math.max(0, quarantinedNow - quarantined));
    samples = Math.max(samples, samplesNow);
    bytes = Math.max(bytes, bytesNow);
    quarantined = Math.max(quarantined, quarantinedNow);
    long now = System.nanoTime();
    if (last || now - stagesAt >= STAGE_PERIOD_NANOS) {
      Map<String, long[]> times = StageTimes.of(stats.get(), sink);
      counters.addStages(StageTimes.minus(times, stages));
      stages = times;
      stagesAt = now;
    }
  }
}
