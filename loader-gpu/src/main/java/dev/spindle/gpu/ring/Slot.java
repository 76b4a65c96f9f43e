package dev.spindle.gpu.ring;

import java.util.concurrent.atomic.AtomicReference;

/**
 * One ring entry, created once and reused for the ring's lifetime. It carries a payload (for the
 * feeder: the slot's host and device memory and host-side metadata) and the state the ring moves it
 * through.
 *
 * <p>Threads: the state is changed only by the ring, by compare-and-set, so an illegal or racing
 * transition fails loudly. The payload belongs to whoever the state says: the filler in FILLING,
 * the copy thread in COPYING, the consumer in LEASED.
 *
 * @param <P> the payload type
 */
public final class Slot<P> {
  private final int index;
  private final P payload;
  private final AtomicReference<SlotState> state = new AtomicReference<>(SlotState.FREE);
  private volatile long sequence = -1;
  private volatile long leaseId = -1;
  private volatile long leaseDeadlineNanos;
  private volatile String holder = "";

  Slot(int index, P payload) {
    this.index = index;
    this.payload = payload;
  }

  /** Position in the ring, 0-based; also the index of the slot's completion event. */
  public int index() {
    return index;
  }

  /** The slot's payload, created once. */
  public P payload() {
    return payload;
  }

  /** Current state (a volatile read). */
  public SlotState state() {
    return state.get();
  }

  /** Order of the batch now in the slot, assigned when it was published; -1 before. */
  public long sequence() {
    return sequence;
  }

  /** Id of the current lease; -1 when not leased. */
  public long leaseId() {
    return leaseId;
  }

  void moveTo(SlotState from, SlotState to) {
    if (!from.canMoveTo(to) || !state.compareAndSet(from, to)) {
      throw new IllegalStateException(
          "Slot "
              + index
              + ": illegal transition "
              + state.get()
              + " -> "
              + to
              + " (expected "
              + from
              + ")");
    }
  }

  void sequence(long s) {
    sequence = s;
  }

  void lease(long id, long deadlineNanos, String holderName) {
    leaseDeadlineNanos = deadlineNanos;
    holder = holderName;
    leaseId = id;
  }

  void clearLease() {
    leaseId = -1;
  }

  long leaseDeadlineNanos() {
    return leaseDeadlineNanos;
  }

  String holder() {
    return holder;
  }

  @Override
  public String toString() {
    return "Slot[" + index + " " + state.get() + " seq=" + sequence + "]";
  }
}
