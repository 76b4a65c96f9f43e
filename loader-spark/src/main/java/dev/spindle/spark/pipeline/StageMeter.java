package dev.spindle.spark.pipeline;

import java.util.concurrent.atomic.LongAdder;

/**
 * Always-on counters of one stage: items, failures, latency, blocked time. Updated by the stage's
 * threads, read by any thread through {@link #snapshot}.
 */
final class StageMeter {
  final String name;
  final String kind;
  final int concurrency;
  final LongAdder items = new LongAdder();
  final LongAdder failures = new LongAdder();
  final LatencyHistogram latency = new LatencyHistogram();
  final IntervalTimer blockedPut = new IntervalTimer();
  final IntervalTimer blockedGet = new IntervalTimer();
  private final long startNanos = System.nanoTime();
  private volatile ItemQueue out;
  private volatile long endNanos;

  StageMeter(String name, String kind, int concurrency) {
    this.name = name;
    this.kind = kind;
    this.concurrency = concurrency;
  }

  /** The queue this stage writes to, for occupancy and peaks (none for the sink). */
  void output(ItemQueue q) {
    this.out = q;
  }

  /**
   * One item took from {@code startNanos} until now: records its latency and, when a trace runs,
   * its span on the calling thread. Called by the thread that did the work.
   */
  void timed(long startNanos) {
    long now = System.nanoTime();
    latency.record(now - startNanos);
    TraceWriter t = Trace.writer;
    if (t != null) {
      t.span(name, startNanos, now);
    }
  }

  /** Items waiting in this stage's output queue now (0 for the sink). */
  int queueItems() {
    ItemQueue q = out;
    return q == null ? 0 : q.size();
  }

  /** The stage is done: its life, over which busy time is measured, ends now. */
  void finish() {
    if (endNanos == 0) {
      blockedPut.set(false);
      blockedGet.set(false);
      endNanos = System.nanoTime();
    }
  }

  StageStats snapshot() {
    long end = endNanos == 0 ? System.nanoTime() : endNanos;
    double elapsedMs = Math.max(1e-6, (end - startNanos) / 1e6);
    double putMs = blockedPut.nanos() / 1e6;
    double getMs = blockedGet.nanos() / 1e6;
    ItemQueue q = out;
    LatencyBuckets buckets = latency.buckets();
    return new StageStats(
        name,
        kind,
        concurrency,
        items.sum(),
        failures.sum(),
        buckets.percentileMs(0.50),
        buckets.percentileMs(0.90),
        buckets.percentileMs(0.99),
        q == null ? 0 : q.occupancy(),
        putMs,
        getMs,
        Math.max(0, 1 - (putMs + getMs) / elapsedMs),
        q == null ? 0 : q.peakItems(),
        q == null ? 0 : q.peakBytes(),
        buckets);
  }
}
