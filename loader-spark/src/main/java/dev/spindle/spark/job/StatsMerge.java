package dev.spindle.spark.job;

import dev.spindle.spark.pipeline.PipelineStats;
import dev.spindle.spark.pipeline.StageStats;
import java.util.ArrayList;
import java.util.List;

/**
 * Sums the pipeline statistics of a job's tasks into one view per stage: counts and blocked times
 * add up, peaks take the maximum; latency percentiles, queue occupancy and busy fraction are means
 * weighted by items (percentiles of a union cannot be rebuilt from per-task percentiles, so these
 * are an approximation, labelled as such in the report).
 */
final class StatsMerge {
  private StatsMerge() {}

  static PipelineStats merge(String name, List<PipelineStats> tasks) {
    List<PipelineStats> present = tasks.stream().filter(t -> t != null && !t.stages().isEmpty()).toList();
    if (present.isEmpty()) {
      return new PipelineStats(name, 0, List.of());
    }
    List<StageStats> merged = new ArrayList<>();
    for (StageStats first : present.get(0).stages()) {
      List<StageStats> same = present.stream().map(t -> t.stage(first.name())).filter(s -> s != null).toList();
      merged.add(mergeStage(first, same));
    }
    double elapsed = present.stream().mapToDouble(PipelineStats::elapsedMs).sum();
    return new PipelineStats(name, elapsed, merged);
  }

  private static StageStats mergeStage(StageStats first, List<StageStats> same) {
    long items = same.stream().mapToLong(StageStats::items).sum();
    double weights = Math.max(1, items);
    return new StageStats(
        first.name(), first.kind(), first.concurrency(), items,
        same.stream().mapToLong(StageStats::failures).sum(),
        same.stream().mapToDouble(s -> s.p50Ms() * s.items()).sum() / weights,
        same.stream().mapToDouble(s -> s.p90Ms() * s.items()).sum() / weights,
        same.stream().mapToDouble(s -> s.p99Ms() * s.items()).sum() / weights,
        same.stream().mapToDouble(s -> s.queueOccupancy() * s.items()).sum() / weights,
        same.stream().mapToDouble(StageStats::blockedPutMs).sum(),
        same.stream().mapToDouble(StageStats::blockedGetMs).sum(),
        same.stream().mapToDouble(s -> s.busyFraction() * s.items()).sum() / weights,
        same.stream().mapToInt(StageStats::queuePeakItems).max().orElse(0),
        same.stream().mapToLong(StageStats::queuePeakBytes).max().orElse(0));
  }
}
