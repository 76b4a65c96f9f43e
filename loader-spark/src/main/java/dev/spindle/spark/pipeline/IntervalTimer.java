package dev.spindle.spark.pipeline;

/**
 * Sums the time spent in one condition (blocked, starved). Switched by one thread at a time (the
 * thread that owns the stage's drain, or the source or consumer thread); read by any thread.
 */
final class IntervalTimer {
  private volatile long since;
  private volatile long total;

  /** Enters ({@code true}) or leaves the condition; repeated calls with the same value are free. */
  void set(boolean in) {
    if (in && since == 0) {
      since = Math.max(1, System.nanoTime());
    } else if (!in && since != 0) {
      total += System.nanoTime() - since;
      since = 0;
    }
  }

  /** Total nanoseconds in the condition, including a current interval. */
  long nanos() {
    long s = since;
    return total + (s == 0 ? 0 : Math.max(0, System.nanoTime() - s));
  }
}
