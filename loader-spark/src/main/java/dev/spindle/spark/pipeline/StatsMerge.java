package dev.spindle.spark.pipeline;

import java.util.ArrayList;
import java.util.List;

/**
 * Sums the pipeline statistics of a job's tasks into one view per stage: counts and blocked times
 * add up, peaks take the maximum, latency histogram buckets add up so p50/p90/p99 are true job-wide
 * percentiles (within {@link LatencyBuckets#RELATIVE_ERROR}); queue occupancy and busy fraction are
 * means weighted by items. Used by the driver on the statistics its tasks return. Stateless; any
 * thread.
 */
public final class StatsMerge {
  private StatsMerge() {}

  /** One view of the stages of {@code tasks} (nulls and empty ones skipped), named {@code name}. */
  public static PipelineStats merge(String name, List<PipelineStats> tasks) {
    List<PipelineStats> present =
        tasks.stream().filter(t -> t != null && !t.stages().isEmpty()).toList();
    if (present.isEmpty()) {
      return new PipelineStats(name, 0, List.of());
    }
    List<StageStats> merged = new ArrayList<>();
    for (StageStats first : present.get(0).stages()) {
      List<StageStats> same =
          present.stream().map(t -> t.stage(first.name())).filter(s -> s != null).toList();
      merged.add(mergeStage(first, same));
    }
    double elapsed = present.stream().mapToDouble(PipelineStats::elapsedMs).sum();
    return new PipelineStats(name, elapsed, merged);
  }

  static StageStats mergeStage(StageStats first, List<StageStats> same) {
    long items = same.stream().mapToLong(StageStats::items).sum();
    double weights = Math.max(1, items);
    LatencyBuckets latency = LatencyBuckets.merge(same.stream().map(StageStats::latency).toList());
    return new StageStats(
        first.name(),
        first.kind(),
        first.concurrency(),
        items,
        same.stream().mapToLong(StageStats::failures).sum(),
        latency.percentileMs(0.50),
        latency.percentileMs(0.90),
        latency.percentileMs(0.99),
        same.stream().mapToDouble(s -> s.queueOccupancy() * s.items()).sum() / weights,
        same.stream().mapToDouble(StageStats::blockedPutMs).sum(),
        same.stream().mapToDouble(StageStats::blockedGetMs).sum(),
        same.stream().mapToDouble(s -> s.busyFraction() * s.items()).sum() / weights,
        same.stream().mapToInt(StageStats::queuePeakItems).max().orElse(0),
        same.stream().mapToLong(StageStats::queuePeakBytes).max().orElse(0),
        latency);
  }
}
