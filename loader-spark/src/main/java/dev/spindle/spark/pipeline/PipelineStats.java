package dev.spindle.spark.pipeline;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Statistics of every stage of one pipeline at one moment, in data-flow order from source to sink.
 * Immutable; any thread.
 */
public record PipelineStats(String pipeline, double elapsedMs, List<StageStats> stages)
    implements java.io.Serializable {
  public PipelineStats {
    stages = List.copyOf(stages);
  }

  /**
   * The stage that limits throughput: the one least often blocked (neither waiting for input nor
   * for room downstream). "sink" means the consumer itself is the slowest part.
   */
  public String bottleneck() {
    return stages.stream()
        .max(Comparator.comparingDouble(StageStats::busyFraction))
        .map(StageStats::name)
        .orElse("");
  }

  /** The stage called {@code name}, or null. */
  public StageStats stage(String name) {
    return stages.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
  }

  /**
   * Plain maps and lists for a JSON report: {@code pipeline}, {@code elapsed_ms}, {@code stages}
   * (one object per stage, see {@link StageStats#toReport()}) and {@code bottleneck}.
   */
  public Map<String, Object> toReport() {
    List<Map<String, Object>> list = new ArrayList<>();
    stages.forEach(s -> list.add(s.toReport()));
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("pipeline", pipeline);
    m.put("elapsed_ms", elapsedMs);
    m.put("stages", list);
    m.put("bottleneck", bottleneck());
    return m;
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder(pipeline).append(String.format(" %.0f ms", elapsedMs));
    for (StageStats s : stages) {
      b.append(
          String.format(
              "%n  %-12s %-9s c=%-3d items=%-9d fail=%-5d p50=%.3fms p99=%.3fms occ=%.2f"
                  + " put=%.0fms get=%.0fms busy=%.2f",
              s.name(),
              s.kind(),
              s.concurrency(),
              s.items(),
              s.failures(),
              s.p50Ms(),
              s.p99Ms(),
              s.queueOccupancy(),
              s.blockedPutMs(),
              s.blockedGetMs(),
              s.busyFraction()));
    }
    return b.append(String.format("%n  bottleneck: %s", bottleneck())).toString();
  }
}
