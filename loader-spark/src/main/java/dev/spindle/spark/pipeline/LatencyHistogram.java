package dev.spindle.spark.pipeline;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Lock-free log-linear histogram of nanosecond durations: 16 buckets per power of two, so a
 * percentile is within ~3% of the true value. Fixed size (about 8 KB); any thread may record and
 * read.
 */
final class LatencyHistogram {
  private static final int SUB_BITS = 4;
  private static final int SUB = 1 << SUB_BITS;
  private static final int BUCKETS = (64 - SUB_BITS) * SUB;

  private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

  void record(long nanos) {
    counts.incrementAndGet(index(Math.max(0, nanos)));
  }

  /** The {@code p}-th percentile (0 < p <= 1) in nanoseconds; 0 when empty. */
  long percentile(double p) {
    long total = 0;
    for (int i = 0; i < BUCKETS; i++) {
      total += counts.get(i);
    }
    if (total == 0) {
      return 0;
    }
    long rank = Math.max(1, (long) Math.ceil(p * total));
    long seen = 0;
    for (int i = 0; i < BUCKETS; i++) {
      seen += counts.get(i);
      if (seen >= rank) {
        return midpoint(i);
      }
    }
    return midpoint(BUCKETS - 1);
  }

  /**
   * The non-empty buckets now, in ascending order (buckets are in ascending order of value). Taken
   * bucket by bucket while threads may still record, so it can miss items recorded meanwhile.
   */
  LatencyBuckets buckets() {
    int n = 0;
    for (int i = 0; i < BUCKETS; i++) {
      n += counts.get(i) == 0 ? 0 : 1;
    }
    int[] idx = new int[n];
    long[] cnt = new long[n];
    int j = 0;
    for (int i = 0; i < BUCKETS && j < n; i++) {
      long c = counts.get(i);
      if (c != 0) {
        idx[j] = i;
        cnt[j++] = c;
      }
    }
    return j == n
        ? new LatencyBuckets(idx, cnt)
        : new LatencyBuckets(java.util.Arrays.copyOf(idx, j), java.util.Arrays.copyOf(cnt, j));
  }

  static int index(long v) {
    if (v < SUB) {
      return (int) v;
    }
    int exp = 63 - Long.numberOfLeadingZeros(v);
    int mantissa = (int) (v >>> (exp - SUB_BITS)) - SUB;
    return (exp - SUB_BITS + 1) * SUB + mantissa;
  }

  static long midpoint(int index) {
    if (index < SUB) {
      return index;
    }
    int exp = index / SUB + SUB_BITS - 1;
    long width = 1L << (exp - SUB_BITS);
    long lower = (long) (index % SUB + SUB) << (exp - SUB_BITS);
    return lower + width / 2;
  }
}
