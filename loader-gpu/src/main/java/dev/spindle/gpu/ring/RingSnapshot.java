package dev.spindle.gpu.ring;

/**
 * A copy of a ring's counters at one moment. Arrays are indexed by {@link SlotState#ordinal()}.
 * Immutable by convention (the arrays are fresh copies owned by the caller); any thread.
 *
 * @param elapsedNanos time since the ring was created
 * @param current slots in each state now
 * @param peak most slots ever in each state at once
 * @param mean time-weighted mean number of slots in each state
 * @param seriesMillis sample times, milliseconds since creation
 * @param series slots in each state at each sample time
 * @param producerBlockedNanos total time fillers waited for a FREE slot
 * @param consumerWaitNanos total time consumers waited for a READY slot
 * @param published batches published (FILLING → STAGED)
 * @param leased leases handed out
 * @param released leases released
 * @param abandoned fills abandoned by failing fillers
 * @param discarded batches dropped unread at close
 * @param expired leases that passed their deadline
 */
public record RingSnapshot(
    long elapsedNanos,
    int[] current,
    int[] peak,
    double[] mean,
    long[] seriesMillis,
    int[][] series,
    long producerBlockedNanos,
    long consumerWaitNanos,
    long published,
    long leased,
    long released,
    long abandoned,
    long discarded,
    long expired) {

  /** Slots in {@code s} now. */
  public int current(SlotState s) {
    return current[s.ordinal()];
  }

  /** Most slots ever in {@code s}. */
  public int peak(SlotState s) {
    return peak[s.ordinal()];
  }

  /** Time-weighted mean of slots in {@code s}. */
  public double mean(SlotState s) {
    return mean[s.ordinal()];
  }
}
