package dev.spindle.spark.pipeline;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * A stage between two queues, driven by {@link #drain()}: whichever thread changes the stage's
 * situation (an upstream stage that added input, a downstream stage or the consumer that made room,
 * a finished op, the stop) calls it, and one thread at a time runs {@link #step()} for everyone. A
 * drain moves items and submits work; it never blocks and never runs an op itself.
 */
abstract class Stage implements Runnable {
  final StageMeter meter;
  final ItemQueue in;
  final ItemQueue out;
  final RunState run;
  final FailureBudget budget;
  private final Function<Object, String> keyFn;
  private final ToLongFunction<Object> sizeFn;
  private final String seqLabel;
  private final AtomicInteger wip = new AtomicInteger();
  private boolean finished;

  Stage(StageSpec spec, ItemQueue in, ItemQueue out, RunState run) {
    this.meter = new StageMeter(spec.name(), spec.kind(), spec.concurrency());
    this.in = in;
    this.out = out;
    this.run = run;
    this.budget = spec.budget();
    this.keyFn = spec.inputKey();
    this.sizeFn = spec.outputSize();
    this.seqLabel = spec.seqLabel();
    meter.output(out);
  }

  /** {@link #drain}, as the target of a {@link #wake}. */
  @Override
  public final void run() {
    drain();
  }

  /**
   * Runs a wake-up: a stage's {@link #run}, or the source's or the sink's. Every wake-up in the
   * engine (queues waking their producer or consumer, a finished op waking its stage) goes through
   * this one call site on purpose: it sees every stage class and both wake-up lambdas, so C2
   * compiles it as a virtual call rather than inlining the woken stage's drain, and through its
   * queues the next stage's, into each caller. Inlined, that chain made the engine's hottest
   * methods (the queue's offer, the pool task that runs an op) take C2 hundreds of milliseconds
   * each to compile, on the cores doing the work, during a loader's first epochs; a virtual call
   * costs nanoseconds per item.
   */
  static void wake(Runnable target) {
    target.run();
  }

  /** Makes progress or, once stopped, releases what the stage holds. Safe from any thread. */
  final void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      try {
        if (run.stopped()) {
          meter.blockedGet.set(false);
          meter.blockedPut.set(false);
          releaseHeld();
        } else {
          step();
        }
      } catch (Throwable t) {
        run.fail(
            meter.name,
            "Pipeline '" + run.pipeline + "' stage '" + meter.name + "' failed internally",
            t);
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  /** One round of work; runs under the drain guard. */
  abstract void step();

  /** Releases every item the stage holds; runs under the drain guard once stopped. */
  abstract void releaseHeld();

  /** Ends the output once the input is drained and nothing is held; true when finished. */
  final boolean finishIfDone(boolean nothingHeld) {
    if (!finished && nothingHeld && in.drained()) {
      finished = true;
      meter.finish();
      out.end();
    }
    if (finished) {
      meter.blockedGet.set(false);
    }
    return finished;
  }

  /** The key of an input item for the quarantine list. */
  final String key(Entry e) {
    if (keyFn != null) {
      try {
        return String.valueOf(keyFn.apply(e.item()));
      } catch (RuntimeException ignored) {
        // Fall back to the position: the item may be half-consumed by a failed op.
      }
    }
    return position(e);
  }

  /** "item N" (or "batch N" after an aggregate): the entry's position in the flow. */
  final String position(Entry e) {
    return seqLabel + " " + e.seq();
  }

  final boolean hasSizeFunction() {
    return sizeFn != null;
  }

  /** Bytes of an output item for the next queue's byte bound. */
  final long size(Object item) {
    return sizeFn == null ? Items.defaultSize(item) : sizeFn.applyAsLong(item);
  }
}
