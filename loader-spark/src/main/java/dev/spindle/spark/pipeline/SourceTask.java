package dev.spindle.spark.pipeline;

import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToLongFunction;

/**
 * Pulls the source iterator on an I/O-pool thread (reading may block) and puts each item into the
 * first queue, waiting (in slices of at most 50 ms, re-checking the stop flag) while it is full.
 * Closes an {@link AutoCloseable} source when it ends, on the same thread that read it.
 */
final class SourceTask implements Runnable {
  private static final long WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  final StageMeter meter;
  private final Iterator<?> items;
  private final ItemQueue out;
  private final RunState run;
  private final ToLongFunction<Object> sizeFn;
  private volatile Thread thread;

  SourceTask(StageSpec spec, Iterator<?> items, ItemQueue out, RunState run) {
    this.meter = new StageMeter(spec.name(), "source", 1);
    this.items = items;
    this.out = out;
    this.run = run;
    this.sizeFn = spec.outputSize();
    meter.output(out);
  }

  @Override
  public void run() {
    thread = Thread.currentThread();
    long seq = 0;
    boolean exhausted = false;
    try {
      while (!run.stopped()) {
        long t0 = System.nanoTime();
        if (!items.hasNext()) {
          exhausted = true;
          break;
        }
        Object item = items.next();
        meter.timed(t0);
        if (item == null) {
          run.fail(
              meter.name,
              String.format(
                  "Pipeline '%s' stopped: source '%s' returned null"
                      + " as item %d (a source must not yield null)",
                  run.pipeline, meter.name, seq),
              null);
          return;
        }
        meter.items.increment();
        long bytes = sizeFn == null ? Items.defaultSize(item) : sizeFn.applyAsLong(item);
        put(new Entry(item, seq++, bytes));
      }
    } catch (Throwable t) {
      run.fail(
          meter.name,
          String.format(
              "Pipeline '%s' stopped: source '%s' threw after %d items",
              run.pipeline, meter.name, seq),
          t);
    } finally {
      meter.finish();
      thread = null;
      closeSource();
      if (exhausted && !run.stopped()) {
        out.end();
      }
      run.exit();
    }
  }

  private void put(Entry e) {
    while (!out.offer(e)) {
      meter.blockedPut.set(true);
      if (run.stopped()) {
        Items.release(e.item());
        return;
      }
      LockSupport.parkNanos(this, WAIT_NANOS);
    }
    meter.blockedPut.set(false);
  }

  /** Wakes the source thread when it waits for room; a spurious wake-up is harmless. */
  void wake() {
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  private void closeSource() {
    if (items instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        if (!run.stopped()) {
          run.fail(
              meter.name,
              "Pipeline '" + run.pipeline + "': closing source '" + meter.name + "' failed",
              e);
        }
      }
    }
  }
}
