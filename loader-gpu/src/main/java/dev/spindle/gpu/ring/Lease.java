package dev.spindle.gpu.ring;

/**
 * A consumer's hold on one READY slot, returned by {@link PrefetchRing#lease}. Pass it back to
 * {@link PrefetchRing#release} exactly once (a second release is ignored).
 *
 * @param slot the leased slot
 * @param id unique per lease, so a stale release cannot free a later lease of the same slot
 * @param sequence the batch's publication order
 * @param deadlineNanos {@link System#nanoTime()} by which the consumer must release it
 */
public record Lease<P>(Slot<P> slot, long id, long sequence, long deadlineNanos) {
  /** True while this lease is the slot's current one. */
  public boolean isCurrent() {
    return slot.leaseId() == id && slot.state() == SlotState.LEASED;
  }
}
