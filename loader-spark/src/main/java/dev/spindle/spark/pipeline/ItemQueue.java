package dev.spindle.spark.pipeline;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The bounded queue between two stages, bounded in items and in bytes. Never blocks: {@link #offer}
 * refuses an entry when full and {@link #poll} returns null when empty; the side that was refused
 * is woken (its {@code Runnable} runs on the other side's thread, outside the lock) once the state
 * it waits for changes: the consumer on the next offer, the producer once the queue is down to half
 * its bounds or empty (so a producer on its own thread, such as the source, is woken once per half
 * queue rather than once per item). An entry larger than the byte bound is admitted into an empty
 * queue, so one huge item cannot wedge the pipeline.
 *
 * <p>One producer and one consumer stage at a time, from any threads. Also measures occupancy (the
 * fraction of time it is non-empty) and its peak items and bytes.
 */
final class ItemQueue {
  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<Entry> entries = new ArrayDeque<>();
  private final int maxItems;
  private final long maxBytes;
  private final long createdNanos = System.nanoTime();
  private Runnable wakeConsumer = () -> {};
  private Runnable wakeProducer = () -> {};
  private long bytes;
  private boolean ended;
  private boolean closed;
  // The consumer starts out waiting: nobody polled yet, so the first offer must wake it.
  private boolean consumerWaiting = true;
  private boolean producerWaiting;
  private long nonEmptySince;
  private long nonEmptyNanos;
  private int peakItems;
  private long peakBytes;

  ItemQueue(int maxItems, long maxBytes) {
    this.maxItems = maxItems;
    this.maxBytes = maxBytes;
  }

  /** Sets who is woken; called once while the pipeline is wired, before any traffic. */
  void wire(Runnable wakeProducer, Runnable wakeConsumer) {
    this.wakeProducer = wakeProducer;
    this.wakeConsumer = wakeConsumer;
  }

  /**
   * Adds an entry if there is room. Returns false when full (the producer is woken later). On a
   * closed queue the entry is released and true is returned: the pipeline is stopping.
   */
  boolean offer(Entry e) {
    boolean wake;
    lock.lock();
    try {
      if (closed) {
        Items.release(e.item());
        return true;
      }
      if (!entries.isEmpty() && (entries.size() >= maxItems || bytes + e.bytes() > maxBytes)) {
        producerWaiting = true;
        return false;
      }
      if (entries.isEmpty()) {
        nonEmptySince = System.nanoTime();
      }
      entries.add(e);
      bytes += e.bytes();
      peakItems = Math.max(peakItems, entries.size());
      peakBytes = Math.max(peakBytes, bytes);
      wake = consumerWaiting;
      consumerWaiting = false;
    } finally {
      lock.unlock();
    }
    if (wake) {
      Stage.wake(wakeConsumer);
    }
    return true;
  }

  /**
   * Removes the oldest entry, or returns null (and the consumer is woken on the next offer). Wakes
   * a refused producer once the queue is down to half its bounds or empty.
   */
  Entry poll() {
    Entry e;
    boolean wake;
    lock.lock();
    try {
      e = entries.poll();
      if (e == null) {
        consumerWaiting = true;
        return null;
      }
      bytes -= e.bytes();
      if (entries.isEmpty()) {
        nonEmptyNanos += System.nanoTime() - nonEmptySince;
      }
      // a refused producer is woken once the queue is down to half its bounds (or empty), not on
      // the first poll: one wake-up per half queue rather than per item
      wake =
          producerWaiting
              && (entries.isEmpty() || entries.size() <= maxItems / 2 && bytes <= maxBytes / 2);
      if (wake) {
        producerWaiting = false;
      }
    } finally {
      lock.unlock();
    }
    if (wake) {
      Stage.wake(wakeProducer);
    }
    return e;
  }

  /** The producer is done: no entry will follow. Wakes the consumer. */
  void end() {
    lock.lock();
    try {
      ended = true;
    } finally {
      lock.unlock();
    }
    Stage.wake(wakeConsumer);
  }

  /** Whether the producer ended and every entry was taken. */
  boolean drained() {
    lock.lock();
    try {
      return ended && entries.isEmpty();
    } finally {
      lock.unlock();
    }
  }

  /** Stops the queue: entries held now, and offered from now on, are released. */
  void close() {
    List<Entry> held;
    lock.lock();
    try {
      closed = true;
      ended = true;
      held = new ArrayList<>(entries);
      entries.clear();
      bytes = 0;
    } finally {
      lock.unlock();
    }
    held.forEach(e -> Items.release(e.item()));
  }

  /** Entries waiting now. */
  int size() {
    lock.lock();
    try {
      return entries.size();
    } finally {
      lock.unlock();
    }
  }

  /** Fraction of the queue's life it held at least one entry. */
  double occupancy() {
    lock.lock();
    try {
      long now = System.nanoTime();
      long busy = nonEmptyNanos + (entries.isEmpty() ? 0 : now - nonEmptySince);
      long life = Math.max(1, now - createdNanos);
      return Math.min(1.0, (double) busy / life);
    } finally {
      lock.unlock();
    }
  }

  int peakItems() {
    lock.lock();
    try {
      return peakItems;
    } finally {
      lock.unlock();
    }
  }

  long peakBytes() {
    lock.lock();
    try {
      return peakBytes;
    } finally {
      lock.unlock();
    }
  }
}
