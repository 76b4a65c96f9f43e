package dev.spindle.spark.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * State shared by all stages of one running pipeline: the stop flag, the first failure, the
 * quarantine list, the first causes and the count of activities (source task, running ops) that
 * {@code close()} waits for. Any thread.
 */
final class RunState {
  static final int MAX_CAUSES = 5;

  final String pipeline;
  final ExecutorPools pools;
  final FailureLog log;
  private final AtomicReference<PipelineFailure> failure = new AtomicReference<>();
  private final List<QuarantineEntry> quarantine = new ArrayList<>();
  private final List<Throwable> causes = new ArrayList<>();
  private final AtomicInteger active = new AtomicInteger();
  private final Runnable onStop;
  private volatile boolean stopped;

  RunState(String pipeline, ExecutorPools pools, Runnable onStop) {
    this.pipeline = pipeline;
    this.pools = pools;
    this.log = new FailureLog(pipeline);
    this.onStop = onStop;
  }

  boolean stopped() {
    return stopped;
  }

  PipelineFailure failure() {
    return failure.get();
  }

  /** Drops one item: counts, quarantines and logs it, then checks the stage's budget. */
  void itemFailed(StageMeter m, FailureBudget budget, String key, String reason, Throwable t) {
    m.failures.increment();
    synchronized (this) {
      quarantine.add(new QuarantineEntry(m.name, key, reason));
      if (causes.size() < MAX_CAUSES) {
        causes.add(t != null ? t : new IllegalStateException(m.name + " [" + key + "]: " + reason));
      }
    }
    log.itemFailed(m.name, key, reason, t);
    checkBudget(m, budget);
  }

  /** Stops the pipeline when the stage's failures exceed its budget. */
  void checkBudget(StageMeter m, FailureBudget budget) {
    long failures = m.failures.sum();
    long processed = failures + m.items.sum();
    if (failures > 0 && budget.exceededSoFar(failures, processed)) {
      fail(
          m.name,
          String.format(
              "Pipeline '%s' stopped: stage '%s' exceeded its failure budget (%s):"
                  + " %d failures in %d items",
              pipeline, m.name, budget.describe(), failures, processed),
          null);
    }
  }

  /**
   * Stops the pipeline with a {@link PipelineFailure}; the first call wins, later ones (and any
   * after the pipeline was closed) are ignored. {@code cause}, when given, comes first in the
   * failure's causes.
   */
  void fail(String stage, String message, Throwable cause) {
    PipelineFailure f;
    synchronized (this) {
      if (failure.get() != null || stopped) {
        return; // the first failure wins; after a plain close, late errors are not failures
      }
      List<Throwable> first = new ArrayList<>();
      if (cause != null) {
        first.add(cause);
      }
      causes.stream().limit(MAX_CAUSES - first.size()).forEach(first::add);
      StringBuilder b = new StringBuilder(message);
      if (!quarantine.isEmpty() || cause != null) {
        b.append(". First causes:");
        if (cause != null) {
          b.append("\n  ").append(stage).append(": ").append(cause);
        }
        quarantine.stream().limit(MAX_CAUSES).forEach(q -> b.append("\n  ").append(q));
      }
      f = new PipelineFailure(stage, b.toString(), first, quarantine);
      failure.set(f);
    }
    stop();
  }

  /** Sets the stop flag and runs the stop hook (once). */
  void stop() {
    if (!stopped) {
      synchronized (this) {
        if (stopped) {
          return;
        }
        stopped = true;
      }
      onStop.run();
    }
  }

  synchronized List<QuarantineEntry> quarantine() {
    return List.copyOf(quarantine);
  }

  /** An activity (the source task or an op) begins; {@code close()} waits for it to end. */
  void enter() {
    active.incrementAndGet();
  }

  void exit() {
    if (active.decrementAndGet() == 0) {
      synchronized (active) {
        active.notifyAll();
      }
    }
  }

  int active() {
    return active.get();
  }

  /** Waits until no activity runs; false when the timeout passed first. */
  boolean awaitQuiet(long timeoutNanos) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    synchronized (active) {
      while (active.get() > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        active.wait(Math.max(1, left / 1_000_000));
      }
    }
    return true;
  }
}
