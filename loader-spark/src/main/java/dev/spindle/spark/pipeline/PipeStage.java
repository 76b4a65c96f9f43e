package dev.spindle.spark.pipeline;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A {@code pipe} stage: runs its op on a pool with at most {@code concurrency} items between
 * leaving the input queue and entering the output queue (in flight or waiting for room), so the
 * stage never holds more than that. In {@link Order#INPUT} mode results wait in a ring indexed by
 * dispatch number until all earlier ones left; in {@link Order#COMPLETION} mode they leave as they
 * finish. Ops run on pool threads; everything else runs in {@link #drain()}.
 */
final class PipeStage extends Stage {
  private static final Object DROPPED = new Object();

  private final Op<Object, Object> op;
  private final int concurrency;
  private final boolean inputOrder;
  private final Executor pool;
  private final AtomicReferenceArray<Object> ring;
  private final ConcurrentLinkedQueue<Object> done = new ConcurrentLinkedQueue<>();
  // Touched only under the drain guard.
  private Object refused;
  private long dispatched;
  private long head;
  private int held;

  PipeStage(StageSpec spec, ItemQueue in, ItemQueue out, RunState run) {
    super(spec, in, out, run);
    this.op = spec.op();
    this.concurrency = spec.concurrency();
    this.inputOrder = spec.order() == Order.INPUT;
    this.pool = spec.io() ? run.pools.io() : run.pools.cpu();
    this.ring = new AtomicReferenceArray<>(inputOrder ? concurrency : 0);
  }

  @Override
  void step() {
    meter.blockedPut.set(!flush());
    dispatch();
    meter.blockedGet.set(held == 0);
    finishIfDone(held == 0);
  }

  /** Moves finished results downstream; false when the output queue refused one. */
  private boolean flush() {
    while (held > 0) {
      Object r = next();
      if (r == null) {
        return true;
      }
      if (r != DROPPED && !out.offer((Entry) r)) {
        refused = r;
        return false;
      }
      refused = null;
      held--;
    }
    return true;
  }

  private Object next() {
    if (refused != null) {
      return refused;
    }
    if (!inputOrder) {
      return done.poll();
    }
    int slot = (int) (head % concurrency);
    Object r = ring.get(slot);
    if (r != null) {
      ring.set(slot, null);
      head++;
    }
    return r;
  }

  private void dispatch() {
    while (held < concurrency) {
      Entry e = in.poll();
      if (e == null) {
        return;
      }
      long index = dispatched++;
      held++;
      run.enter();
      try {
        pool.execute(() -> process(e, index));
      } catch (RejectedExecutionException x) {
        run.exit();
        Items.release(e.item());
        run.fail(
            meter.name,
            "Pipeline '"
                + run.pipeline
                + "': the pool of stage '"
                + meter.name
                + "' refused work (was it closed?)",
            x);
        return;
      }
    }
  }

  /** Runs on a pool thread: applies the op, records the result, and drains. */
  private void process(Entry e, long index) {
    try {
      Object result;
      try {
        result = run.stopped() ? release(e) : apply(e);
      } catch (Throwable t) { // from a key or size function: a bug, not bad input
        Items.release(e.item());
        run.fail(
            meter.name,
            String.format(
                "Pipeline '%s' stopped: stage '%s' failed outside its"
                    + " op (key or size function) on [%s]",
                run.pipeline, meter.name, position(e)),
            t);
        result = DROPPED;
      }
      if (inputOrder) {
        ring.set((int) (index % concurrency), result);
      } else {
        done.add(result);
      }
      wake(this);
    } finally {
      run.exit();
    }
  }

  private Object apply(Entry e) {
    long t0 = System.nanoTime();
    Object result;
    try {
      result = op.apply(e.item());
    } catch (Throwable t) {
      meter.timed(t0);
      return failed(e, t);
    }
    meter.timed(t0);
    if (result == null) {
      return failed(e, null);
    }
    long bytes;
    try {
      bytes = size(result);
    } catch (RuntimeException t) {
      Items.release(result);
      return failed(e, new IllegalStateException("size function failed on the op's result", t));
    }
    meter.items.increment();
    if (budget.maxFailures() < 0 && meter.failures.sum() > 0) {
      run.checkBudget(meter, budget);
    }
    return new Entry(result, e.seq(), bytes);
  }

  private Object failed(Entry e, Throwable t) {
    String key = key(e);
    Items.release(e.item());
    if (t instanceof Error) {
      run.fail(
          meter.name,
          String.format(
              "Pipeline '%s' stopped: stage '%s' threw %s on [%s] (an Error is never budgeted)",
              run.pipeline, meter.name, t.getClass().getName(), key),
          t);
      return DROPPED;
    }
    String reason = t == null ? "op returned null (an op rejects an item by throwing)" : reason(t);
    run.itemFailed(meter, budget, key, reason, t);
    return DROPPED;
  }

  /**
   * A checked exception is an op's verdict on the item: its message is the reason. A runtime
   * exception is more likely a bug than a verdict, so its class stays in the reason.
   */
  private static String reason(Throwable t) {
    return t instanceof RuntimeException || t.getMessage() == null ? t.toString() : t.getMessage();
  }

  private Object release(Entry e) {
    Items.release(e.item());
    return DROPPED;
  }

  @Override
  void releaseHeld() {
    if (refused != null && refused != DROPPED) {
      Items.release(((Entry) refused).item());
    }
    refused = null;
    for (int i = 0; i < ring.length(); i++) {
      Object r = ring.getAndSet(i, null);
      if (r instanceof Entry e) {
        Items.release(e.item());
      }
    }
    for (Object r = done.poll(); r != null; r = done.poll()) {
      if (r instanceof Entry e) {
        Items.release(e.item());
      }
    }
  }
}
