package dev.spindle.gpu.ring;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The slot state machine of one {@link PrefetchRing}, as Disruptor's {@code Sequencer}: which slot
 * goes next to whom (FREE slots to fillers, STAGED ones to the copy thread, READY ones to
 * consumers, each queue oldest first), the publication sequence numbers, and every transition, made
 * on the slot by compare-and-set (so a protocol error fails loudly) and counted in {@link
 * RingStats}.
 *
 * <p>Threads: not thread-safe; called only under the ring's lock. It never blocks nor signals:
 * waiting, timeouts and wake-ups are the ring's. Owns its three queues; the slots are the ring's
 * (created once, reused), their payloads the ring creator's.
 */
final class SlotSequencer<P> {
  private final List<Slot<P>> slots;
  private final ArrayDeque<Slot<P>> free;
  private final ArrayDeque<Slot<P>> staged;
  private final ArrayDeque<Slot<P>> ready;
  private final RingStats stats;
  private long nextSequence;

  /** All of {@code slots} FREE, queued in index order; transitions counted in {@code stats}. */
  SlotSequencer(List<Slot<P>> slots, RingStats stats) {
    this.slots = slots;
    this.free = new ArrayDeque<>(slots);
    this.staged = new ArrayDeque<>(slots.size());
    this.ready = new ArrayDeque<>(slots.size());
    this.stats = stats;
  }

  /** FREE → FILLING of the next free slot; null when every slot is in use. */
  Slot<P> claim() {
    Slot<P> s = free.poll();
    if (s != null) {
      move(s, SlotState.FREE, SlotState.FILLING);
    }
    return s;
  }

  /** FILLING → STAGED, with the next sequence number. */
  void publish(Slot<P> slot) {
    move(slot, SlotState.FILLING, SlotState.STAGED);
    slot.sequence(nextSequence++);
    staged.add(slot);
    stats.published++;
  }

  /** FILLING → FREE: a fill that failed, never published. */
  void abandon(Slot<P> slot) {
    move(slot, SlotState.FILLING, SlotState.FREE);
    stats.abandoned++;
    free.add(slot);
  }

  boolean hasStaged() {
    return !staged.isEmpty();
  }

  /** STAGED → COPYING of the oldest staged slot; null when none is staged. */
  Slot<P> takeStaged() {
    Slot<P> s = staged.poll();
    if (s != null) {
      move(s, SlotState.STAGED, SlotState.COPYING);
    }
    return s;
  }

  /** COPYING → READY, queued behind the slots made ready before. */
  void ready(Slot<P> slot) {
    move(slot, SlotState.COPYING, SlotState.READY);
    ready.add(slot);
  }

  /**
   * READY → LEASED of the oldest ready slot; null when none is ready. The caller gives it its lease
   * ({@link LeaseDeadlines#lease}).
   */
  Slot<P> takeReady() {
    Slot<P> s = ready.poll();
    if (s != null) {
      move(s, SlotState.READY, SlotState.LEASED);
      stats.leased++;
    }
    return s;
  }

  /** LEASED → FREE at the end of its current lease (the caller checked that it is current). */
  void release(Slot<P> s) {
    s.clearLease();
    move(s, SlotState.LEASED, SlotState.FREE);
    stats.released++;
    free.add(s);
  }

  /** STAGED and READY slots back to FREE, their batches dropped (the ring is closing). */
  void discardQueued() {
    discard(staged, SlotState.STAGED);
    discard(ready, SlotState.READY);
  }

  private void discard(ArrayDeque<Slot<P>> queue, SlotState from) {
    for (Slot<P> s = queue.poll(); s != null; s = queue.poll()) {
      move(s, from, SlotState.FREE);
      stats.discarded++;
      free.add(s);
    }
  }

  /** Every LEASED slot back to FREE with its lease cleared; returns how many. */
  int revokeLeases() {
    int n = 0;
    for (Slot<P> s : slots) {
      if (s.state() == SlotState.LEASED) {
        s.clearLease();
        move(s, SlotState.LEASED, SlotState.FREE);
        free.add(s);
        n++;
      }
    }
    return n;
  }

  /** Slots in {@code state} now. */
  int count(SlotState state) {
    return stats.count(state);
  }

  /** Slots holding a batch not yet leased: FILLING, STAGED, COPYING or READY. */
  int inFlight() {
    return stats.count(SlotState.FILLING)
        + stats.count(SlotState.STAGED)
        + stats.count(SlotState.COPYING)
        + stats.count(SlotState.READY);
  }

  /** The count of each state, e.g. {@code FREE=2, FILLING=0, ...}, for messages. */
  String describe() {
    StringBuilder b = new StringBuilder();
    for (SlotState st : SlotState.values()) {
      b.append(b.length() == 0 ? "" : ", ").append(st).append('=').append(stats.count(st));
    }
    return b.toString();
  }

  private void move(Slot<P> s, SlotState from, SlotState to) {
    s.moveTo(from, to);
    stats.transition(from, to, System.nanoTime());
  }
}
