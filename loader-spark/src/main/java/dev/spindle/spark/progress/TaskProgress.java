package dev.spindle.spark.progress;

import dev.spindle.spark.pipeline.PipelineStats;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One task's side of {@link ProgressCounters}: the task reports its running totals, this adds what
 * changed since the last report, and its pipeline's stage times ({@link StageTimes}) at most every
 * quarter second. Task thread only; a tracker of null counters does nothing.
 */
public final class TaskProgress {
  private static final long STAGE_PERIOD_NANOS = 250_000_000L;

  private final ProgressCounters counters;
  private long samples;
  private long bytes;
  private long quarantined;
  private Map<String, long[]> stages = Map.of();
  private long stagesAt;

  /** {@code counters}: the job's, or null when no one watches. */
  public TaskProgress(ProgressCounters counters) {
    this.counters = counters;
  }

  /**
   * The task's totals so far: {@code samplesNow} handled (delivered or quarantined), {@code
   * bytesNow} read, {@code quarantinedNow} of them quarantined, and its pipeline's statistics
   * (asked for only when due, or when {@code last}).
   */
  public void update(
      long samplesNow,
      long bytesNow,
      long quarantinedNow,
      Supplier<PipelineStats> stats,
      boolean last) {
    if (counters == null) {
      return;
    }
    counters.add(samplesNow - samples, bytesNow - bytes, quarantinedNow - quarantined);
    samples = samplesNow;
    bytes = bytesNow;
    quarantined = quarantinedNow;
    long now = System.nanoTime();
    if (last || now - stagesAt >= STAGE_PERIOD_NANOS) {
      Map<String, long[]> times = StageTimes.of(stats.get());
      counters.addStages(StageTimes.minus(times, stages));
      stages = times;
      stagesAt = now;
    }
  }
}
