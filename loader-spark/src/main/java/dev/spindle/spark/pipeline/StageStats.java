package dev.spindle.spark.pipeline;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Statistics of one stage at one moment. Immutable.
 *
 * <p>{@code kind} is "source", "pipe", "aggregate" or "sink" (the consumer). {@code items} counts
 * items the stage emitted (batches for an aggregate, items taken for the sink); {@code failures}
 * items it dropped. Latency is per item: {@code it.next()} for the source, the op for a pipe, the
 * time to fill a batch for an aggregate, and the consumer's time between two items for the sink.
 * {@code queueOccupancy} is the fraction of time the stage's output queue held an item; {@code
 * blockedPutMs} the time results waited for room in that queue; {@code blockedGetMs} the time the
 * stage had nothing in flight and nothing to take. {@code busyFraction} is 1 minus both blocked
 * times over the stage's life; the stage with the highest is the bottleneck. {@code latency} holds
 * the histogram buckets the percentiles come from, so statistics of several tasks merge into true
 * percentiles (within {@link LatencyBuckets#RELATIVE_ERROR}).
 */
public record StageStats(
    String name,
    String kind,
    int concurrency,
    long items,
    long failures,
    double p50Ms,
    double p90Ms,
    double p99Ms,
    double queueOccupancy,
    double blockedPutMs,
    double blockedGetMs,
    double busyFraction,
    int queuePeakItems,
    long queuePeakBytes,
    LatencyBuckets latency)
    implements java.io.Serializable {

  /** Plain map for a JSON report (snake_case keys). */
  public Map<String, Object> toReport() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", name);
    m.put("kind", kind);
    m.put("concurrency", concurrency);
    m.put("items", items);
    m.put("failures", failures);
    Map<String, Object> latency = new LinkedHashMap<>();
    latency.put("p50", p50Ms);
    latency.put("p90", p90Ms);
    latency.put("p99", p99Ms);
    m.put("latency_ms", latency);
    m.put("queue_occupancy", queueOccupancy);
    m.put("blocked_put_ms", blockedPutMs);
    m.put("blocked_get_ms", blockedGetMs);
    m.put("busy_fraction", busyFraction);
    m.put("queue_peak_items", queuePeakItems);
    m.put("queue_peak_bytes", queuePeakBytes);
    return m;
  }
}
