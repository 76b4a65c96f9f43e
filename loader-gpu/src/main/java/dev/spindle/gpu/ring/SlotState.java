package dev.spindle.gpu.ring;

/**
 * Where a ring slot is in its cycle:
 *
 * <pre>
 *   FREE → FILLING → STAGED → COPYING → READY → LEASED → FREE
 *            │ abandon (filler failed)                    ▲
 *            └────────────────────────────────────────────┘
 * </pre>
 *
 * A slot leaves COPYING only when the device reports (by event) that it no longer reads the host
 * bytes, and returns to FREE only when its consumer releases it. When the ring closes, slots that
 * were not leased are discarded straight to FREE.
 */
public enum SlotState {
  /** Owned by the ring, waiting for a filler. */
  FREE,
  /** Owned by one filler thread, which writes the host bytes. */
  FILLING,
  /** Filled and sequenced; waiting for the copy thread. */
  STAGED,
  /** The copy thread has enqueued the host-to-device copy; the device may still read it. */
  COPYING,
  /** In device memory; waiting for a consumer. */
  READY,
  /** Held by one consumer until it releases the lease. */
  LEASED;

  /** True if the ring allows {@code this → next}. */
  public boolean canMoveTo(SlotState next) {
    return switch (this) {
      case FREE -> next == FILLING;
      case FILLING -> next == STAGED || next == FREE;
      case STAGED -> next == COPYING || next == FREE;
      case COPYING -> next == READY || next == FREE;
      case READY -> next == LEASED || next == FREE;
      case LEASED -> next == FREE;
    };
  }
}
