package dev.spindle.spark.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * An {@code aggregate} stage: groups consecutive items into lists of {@code size} (or fewer, closed
 * by an item its {@code ends} predicate accepts), in input order, and at the end emits ({@link
 * LastBatch#KEEP}) or releases ({@link LastBatch#DROP}) a shorter last group. Cheap enough to run
 * entirely in {@link #drain()}: no pool work.
 */
final class AggregateStage extends Stage {
  private final int size;
  private final boolean keepRemainder;

  /** Null, or the items that close their group before it holds {@code size}. */
  private final Predicate<Object> ends;

  // Touched only under the drain guard.
  private List<Object> batch;
  private long batchBytes;
  private long batchStart;
  private long batches;
  private Entry pending;

  AggregateStage(StageSpec spec, ItemQueue in, ItemQueue out, RunState run) {
    super(spec, in, out, run);
    this.size = spec.batchSize();
    this.keepRemainder = spec.remainder() == LastBatch.KEEP;
    this.ends = spec.ends();
    this.batch = new ArrayList<>(size);
  }

  @Override
  void step() {
    meter.blockedGet.set(false);
    if (!flushPending()) {
      return;
    }
    for (Entry e = in.poll(); e != null; e = in.poll()) {
      if (batch.isEmpty()) {
        batchStart = System.nanoTime();
      }
      batch.add(e.item());
      batchBytes += e.bytes();
      if (batch.size() == size || (ends != null && ends.test(e.item()))) {
        seal();
        if (!flushPending()) {
          return;
        }
      }
    }
    meter.blockedGet.set(true);
    if (in.drained() && !batch.isEmpty()) {
      if (keepRemainder) {
        seal();
        if (!flushPending()) {
          return;
        }
      } else {
        Items.release(batch);
        batch = new ArrayList<>(size);
      }
    }
    finishIfDone(batch.isEmpty());
  }

  private void seal() {
    List<Object> full = batch;
    batch = new ArrayList<>(size);
    long bytes = batchBytes;
    batchBytes = 0;
    meter.timed(batchStart);
    meter.items.increment();
    pending = new Entry(full, batches++, hasSizeFunction() ? size(full) : bytes);
  }

  private boolean flushPending() {
    boolean ok = pending == null || out.offer(pending);
    if (ok) {
      pending = null;
    }
    meter.blockedPut.set(!ok);
    return ok;
  }

  @Override
  void releaseHeld() {
    if (pending != null) {
      Items.release(pending.item());
      pending = null;
    }
    Items.release(batch);
    batch = new ArrayList<>(size);
  }
}
