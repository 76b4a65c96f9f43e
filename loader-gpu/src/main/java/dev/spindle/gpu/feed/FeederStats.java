package dev.spindle.gpu.feed;

import dev.spindle.gpu.ring.RingSnapshot;
import dev.spindle.gpu.ring.SlotState;

/**
 * One feeder's statistics at a moment, for the job report: slots in each state over time,
 * host-to-device bytes and bandwidth, copy time, time trainers waited and producers were blocked.
 * Immutable value (the snapshot's arrays are private copies); any thread.
 *
 * @param device the device description
 * @param ring the ring's counters
 * @param h2dBytes bytes copied host to device (images and labels)
 * @param batchesCopied batches that reached READY
 * @param copyBusyNanos time the stream was busy with copies (and normalisation)
 * @param leasesRevokedAtClose leases still held when the feeder closed
 * @param zeroCopyBatches batches the copy engine read in place from the pinned pool
 */
public record FeederStats(
    String device,
    RingSnapshot ring,
    long h2dBytes,
    long batchesCopied,
    long copyBusyNanos,
    int leasesRevokedAtClose,
    long zeroCopyBatches) {

  /** H2D GB/s (1e9 bytes) while the stream was busy. */
  public double h2dGbps() {
    return copyBusyNanos == 0 ? 0 : (double) h2dBytes / copyBusyNanos;
  }

  /** H2D GB/s over the feeder's whole life. */
  public double wallGbps() {
    return (double) h2dBytes / Math.max(1, ring.elapsedNanos());
  }

  /** Mean time a trainer waited per leased batch, in milliseconds. */
  public double consumerWaitMsPerBatch() {
    return ring.leased() == 0 ? 0 : ring.consumerWaitNanos() / 1e6 / ring.leased();
  }

  /** Mean time a producer was blocked per published batch, in milliseconds. */
  public double producerBlockedMsPerBatch() {
    return ring.published() == 0 ? 0 : ring.producerBlockedNanos() / 1e6 / ring.published();
  }

  /** This snapshot as one JSON object. */
  public String toJson() {
    Json j = new Json()
        .field("device", device)
        .field("elapsed_ms", ring.elapsedNanos() / 1_000_000L)
        .field("batches_published", ring.published())
        .field("batches_copied", batchesCopied)
        .field("zero_copy_batches", zeroCopyBatches)
        .field("batches_leased", ring.leased())
        .field("batches_released", ring.released())
        .field("fills_abandoned", ring.abandoned())
        .field("batches_discarded", ring.discarded())
        .field("leases_expired", ring.expired())
        .field("leases_revoked_at_close", leasesRevokedAtClose)
        .field("h2d_bytes", h2dBytes)
        .field("h2d_gbps", h2dGbps())
        .field("wall_gbps", wallGbps())
        .field("copy_ms", copyBusyNanos / 1e6)
        .field("consumer_wait_ms", ring.consumerWaitNanos() / 1e6)
        .field("consumer_wait_ms_per_batch", consumerWaitMsPerBatch())
        .field("producer_blocked_ms", ring.producerBlockedNanos() / 1e6)
        .field("producer_blocked_ms_per_batch", producerBlockedMsPerBatch());
    return j.raw("slots", slotsJson()).build();
  }

  private String slotsJson() {
    Json states = new Json();
    for (SlotState s : SlotState.values()) {
      states.raw(s.name(), new Json()
          .field("now", ring.current(s))
          .field("peak", ring.peak(s))
          .field("mean", ring.mean(s))
          .build());
    }
    StringBuilder series = new StringBuilder("[");
    for (int i = 0; i < ring.seriesMillis().length; i++) {
      series.append(i == 0 ? "" : ",").append('[').append(ring.seriesMillis()[i]);
      for (int c : ring.series()[i]) {
        series.append(',').append(c);
      }
      series.append(']');
    }
    series.append(']');
    StringBuilder names = new StringBuilder("[\"ms\"");
    for (SlotState s : SlotState.values()) {
      names.append(",\"").append(s.name()).append('"');
    }
    return states.raw("series_columns", names.append(']').toString())
        .raw("series", series.toString())
        .build();
  }
}
