package dev.spindle.spark.shard;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the shard cache did for one reader, counted as it happens: the open's hit or miss on the
 * reader's thread, the bytes served by whichever thread reads the local copy (the tar reader's own,
 * or the threads of concurrent ranged reads), hence the atomics. {@link #counts()} is a snapshot.
 */
final class CacheTally {
  private final AtomicLong hits = new AtomicLong();
  private final AtomicLong misses = new AtomicLong();
  private final AtomicLong fetched = new AtomicLong();
  private final AtomicLong served = new AtomicLong();
  private final AtomicLong evictions = new AtomicLong();
  private final AtomicLong corrupt = new AtomicLong();
  private volatile String unusable;

  void hit() {
    hits.incrementAndGet();
  }

  void miss(long bytes) {
    misses.incrementAndGet();
    fetched.addAndGet(bytes);
  }

  void served(long bytes) {
    served.addAndGet(bytes);
  }

  void evicted(int entries) {
    evictions.addAndGet(entries);
  }

  void corrupt() {
    corrupt.incrementAndGet();
  }

  void unusable(String why) {
    if (unusable == null) {
      unusable = why;
    }
  }

  CacheCounts counts() {
    return new CacheCounts(
        hits.get(),
        misses.get(),
        fetched.get(),
        served.get(),
        evictions.get(),
        corrupt.get(),
        unusable);
  }
}
