package dev.spindle.spark.shard;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What one task's shard readers asked of storage: bytes read, read requests (an open's first read,
 * each ranged read, each read after a seek or skip), shard opens, and of those the ones read
 * through a member index and the compressed tars (which cannot be). Owned by the task; updated by
 * its reader threads and the executor's range-read threads, so every counter is atomic.
 */
public final class IoCounters {
  private final AtomicLong bytesRead = new AtomicLong();
  private final AtomicLong readRequests = new AtomicLong();
  private final AtomicLong shardOpens = new AtomicLong();
  private final AtomicLong shardOpensIndexed = new AtomicLong();
  private final AtomicLong shardOpensCompressed = new AtomicLong();

  /** One request to storage that returned {@code bytes}. */
  void request(long bytes) {
    readRequests.incrementAndGet();
    bytesRead.addAndGet(bytes);
  }

  /** More bytes of the request in progress. */
  void bytes(long bytes) {
    bytesRead.addAndGet(bytes);
  }

  void opened(boolean indexed, boolean compressed) {
    shardOpens.incrementAndGet();
    if (indexed) {
      shardOpensIndexed.incrementAndGet();
    }
    if (compressed) {
      shardOpensCompressed.incrementAndGet();
    }
  }

  /** What was counted so far. */
  public IoCounts counts() {
    return new IoCounts(
        bytesRead.get(),
        readRequests.get(),
        shardOpens.get(),
        shardOpensIndexed.get(),
        shardOpensCompressed.get());
  }
}
