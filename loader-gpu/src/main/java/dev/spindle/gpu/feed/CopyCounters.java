package dev.spindle.gpu.feed;

/**
 * Host-to-device counters, written only by the copy thread (single writer, volatile fields) and
 * read by anyone.
 */
final class CopyCounters {
  volatile long bytes;
  volatile long batches;
  volatile long busyNanos;
  volatile long zeroCopyBatches;
  volatile long inPlaceBytes;
  private long lastRetireNanos;

  /** Copy thread: a batch submitted at {@code submitNanos} was seen complete at {@code now}. */
  void retired(long submitNanos, long now, long batchBytes, boolean zeroCopy, boolean inPlace) {
    if (zeroCopy) {
      zeroCopyBatches++;
    }
    if (inPlace) {
      inPlaceBytes += batchBytes;
    }
    busyNanos += now - Math.max(submitNanos, lastRetireNanos);
    lastRetireNanos = now;
    bytes += batchBytes;
    batches++;
  }
}
