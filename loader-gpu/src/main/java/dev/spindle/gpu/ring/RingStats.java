package dev.spindle.gpu.ring;

import java.util.Arrays;

/**
 * Counters of one ring: slots in each state (now, peak, time-weighted mean and a bounded time
 * series), time producers were blocked, time consumers waited, and event counts. All arrays are
 * allocated once; when the series is full, every other sample is dropped and the sampling interval
 * doubles, so it always spans the whole run.
 *
 * <p>Threads: updated only under the ring's lock; read through {@link #snapshot}.
 */
final class RingStats {
  private static final int STATES = SlotState.values().length;
  private static final int SERIES = 256;
  private final long startNanos;
  private final int[] count = new int[STATES];
  private final int[] peak = new int[STATES];
  private final long[] slotNanos = new long[STATES];
  private final long[] seriesAt = new long[SERIES];
  private final int[][] series = new int[SERIES][STATES];
  private int seriesSize;
  private long intervalNanos = 10_000_000L;
  private long lastChange;
  long producerBlockedNanos;
  long consumerWaitNanos;
  long published;
  long leased;
  long released;
  long abandoned;
  long discarded;
  long expired;

  RingStats(int slots, long now) {
    startNanos = now;
    lastChange = now;
    count[SlotState.FREE.ordinal()] = slots;
    peak[SlotState.FREE.ordinal()] = slots;
  }

  int count(SlotState s) {
    return count[s.ordinal()];
  }

  void transition(SlotState from, SlotState to, long now) {
    integrate(now);
    count[from.ordinal()]--;
    int c = ++count[to.ordinal()];
    if (c > peak[to.ordinal()]) {
      peak[to.ordinal()] = c;
    }
    sample(now);
  }

  private void integrate(long now) {
    long dt = now - lastChange;
    for (int i = 0; i < STATES; i++) {
      slotNanos[i] += count[i] * dt;
    }
    lastChange = now;
  }

  private void sample(long now) {
    if (seriesSize > 0 && now - seriesAt[seriesSize - 1] < intervalNanos) {
      return;
    }
    if (seriesSize == SERIES) {
      for (int i = 0; i < SERIES / 2; i++) {
        seriesAt[i] = seriesAt[2 * i];
        System.arraycopy(series[2 * i], 0, series[i], 0, STATES);
      }
      seriesSize = SERIES / 2;
      intervalNanos *= 2;
    }
    seriesAt[seriesSize] = now;
    System.arraycopy(count, 0, series[seriesSize++], 0, STATES);
  }

  RingSnapshot snapshot(long now) {
    integrate(now);
    long elapsed = Math.max(1, now - startNanos);
    double[] mean = new double[STATES];
    for (int i = 0; i < STATES; i++) {
      mean[i] = (double) slotNanos[i] / elapsed;
    }
    long[] at = new long[seriesSize];
    int[][] counts = new int[seriesSize][];
    for (int i = 0; i < seriesSize; i++) {
      at[i] = (seriesAt[i] - startNanos) / 1_000_000L;
      counts[i] = series[i].clone();
    }
    return new RingSnapshot(
        elapsed,
        count.clone(),
        peak.clone(),
        mean,
        at,
        counts,
        producerBlockedNanos,
        consumerWaitNanos,
        published,
        leased,
        released,
        abandoned,
        discarded,
        expired);
  }

  @Override
  public String toString() {
    return "RingStats" + Arrays.toString(count);
  }
}
