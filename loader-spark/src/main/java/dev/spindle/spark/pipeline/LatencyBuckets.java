package dev.spindle.spark.pipeline;

import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

/**
 * The non-empty buckets of one stage's latency histogram, as shipped from a task to the driver:
 * {@code index[i]} is a bucket of the log-linear layout of {@link LatencyHistogram} (16 buckets per
 * power of two of nanoseconds) and {@code count[i]} how many items fell in it. Buckets of several
 * tasks add up ({@link #merge}), so a percentile of the merged buckets is a true job-wide
 * percentile, reported as the bucket's midpoint: within {@value #RELATIVE_ERROR} (1/32) of the
 * exact value. Immutable (the arrays are never changed after construction); any thread.
 */
public record LatencyBuckets(int[] index, long[] count) implements java.io.Serializable {
  /** The largest relative error of a percentile: half a bucket of 1/16 of a power of two. */
  public static final double RELATIVE_ERROR = 1.0 / 32;

  /** No items. */
  public static final LatencyBuckets EMPTY = new LatencyBuckets(new int[0], new long[0]);

  public LatencyBuckets {
    if (index.length != count.length) {
      throw new IllegalArgumentException(
          "latency buckets: " + index.length + " indexes but " + count.length + " counts");
    }
  }

  /** The sum of the buckets of {@code parts} (nulls skipped). */
  public static LatencyBuckets merge(List<LatencyBuckets> parts) {
    TreeMap<Integer, Long> sum = new TreeMap<>();
    for (LatencyBuckets b : parts) {
      if (b == null) {
        continue;
      }
      for (int i = 0; i < b.index.length; i++) {
        sum.merge(b.index[i], b.count[i], Long::sum);
      }
    }
    int[] idx = new int[sum.size()];
    long[] cnt = new long[sum.size()];
    int i = 0;
    for (var e : sum.entrySet()) {
      idx[i] = e.getKey();
      cnt[i++] = e.getValue();
    }
    return new LatencyBuckets(idx, cnt);
  }

  /** Items counted. */
  public long total() {
    return Arrays.stream(count).sum();
  }

  /** The {@code p}-th percentile (0 < p <= 1) in nanoseconds; 0 when empty. */
  public long percentileNanos(double p) {
    long total = total();
    if (total == 0) {
      return 0;
    }
    long rank = Math.max(1, (long) Math.ceil(p * total));
    long seen = 0;
    for (int i = 0; i < index.length; i++) {
      seen += count[i];
      if (seen >= rank) {
        return LatencyHistogram.midpoint(index[i]);
      }
    }
    return LatencyHistogram.midpoint(index[index.length - 1]);
  }

  /** The {@code p}-th percentile in milliseconds. */
  public double percentileMs(double p) {
    return percentileNanos(p) / 1e6;
  }
}
