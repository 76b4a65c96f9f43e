package dev.spindle.gpu.feed;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spindle.gpu.ring.RingSnapshot;
import dev.spindle.gpu.ring.SlotState;
import java.util.Locale;

/**
 * One feeder's statistics at a moment, for the job report: slots in each state over time,
 * host-to-device bytes and bandwidth, copy time, time trainers waited and producers were blocked.
 * Immutable value (the snapshot's arrays are private copies); any thread.
 *
 * @param device the device description
 * @param ring the ring's counters
 * @param h2dBytes bytes that reached device memory (images and labels): copied host to device, or,
 *     on a host device, written there in place by producers ({@code inPlaceBytes} of them)
 * @param batchesCopied batches that reached READY
 * @param copyBusyNanos time the stream was busy with copies (and normalisation)
 * @param leasesRevokedAtClose leases still held when the feeder closed
 * @param zeroCopyBatches batches the copy engine read in place from the pinned pool, or that
 *     producers wrote into their slot ({@link SlotWriter})
 * @param hostCopyBytes image bytes copied on the host into slots: the staging copies of {@link
 *     GpuFeeder#offer}ed batches (0 for batches in the pinned pool and for {@link SlotWriter}s)
 * @param inPlaceBytes of {@code h2dBytes}, those {@link SlotWriter}s wrote straight into a host
 *     device's memory: nothing copied them, and {@link #h2dGbps} leaves them out
 */
public record FeederStats(
    String device,
    RingSnapshot ring,
    long h2dBytes,
    long batchesCopied,
    long copyBusyNanos,
    int leasesRevokedAtClose,
    long zeroCopyBatches,
    long hostCopyBytes,
    long inPlaceBytes) {

  /** H2D GB/s (1e9 bytes) while the stream was busy: of the bytes copied, not those in place. */
  public double h2dGbps() {
    return copyBusyNanos == 0 ? 0 : (double) (h2dBytes - inPlaceBytes) / copyBusyNanos;
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

  /** This snapshot as one JSON object (Jackson's compact form of {@link #toJsonNode()}). */
  public String toJson() {
    return toJsonNode().toString(); // valid JSON since Jackson 2.10
  }

  /**
   * This snapshot as a new JSON tree, the caller's, for a report that embeds it; numbers as {@link
   * #reported} gives them.
   */
  public ObjectNode toJsonNode() {
    ObjectNode j =
        JsonNodeFactory.instance
            .objectNode()
            .put("device", device)
            .put("elapsed_ms", ring.elapsedNanos() / 1_000_000L)
            .put("batches_published", ring.published())
            .put("batches_copied", batchesCopied)
            .put("zero_copy_batches", zeroCopyBatches)
            .put("host_copy_bytes", hostCopyBytes)
            .put("in_place_bytes", inPlaceBytes)
            .put("batches_leased", ring.leased())
            .put("batches_released", ring.released())
            .put("fills_abandoned", ring.abandoned())
            .put("batches_discarded", ring.discarded())
            .put("leases_expired", ring.expired())
            .put("leases_revoked_at_close", leasesRevokedAtClose)
            .put("h2d_bytes", h2dBytes)
            .put("h2d_gbps", reported(h2dGbps()))
            .put("wall_gbps", reported(wallGbps()))
            .put("copy_ms", reported(copyBusyNanos / 1e6))
            .put("consumer_wait_ms", reported(ring.consumerWaitNanos() / 1e6))
            .put("consumer_wait_ms_per_batch", reported(consumerWaitMsPerBatch()))
            .put("producer_blocked_ms", reported(ring.producerBlockedNanos() / 1e6))
            .put("producer_blocked_ms_per_batch", reported(producerBlockedMsPerBatch()));
    j.set("slots", slotsJson());
    return j;
  }

  /**
   * A measured value as Spindle's JSON reports carry it: 6 significant digits (what the figures
   * support), null when it is not finite (JSON has no NaN or infinity).
   */
  static Double reported(double value) {
    return Double.isFinite(value)
        ? Double.valueOf(String.format(Locale.ROOT, "%.6g", value))
        : null;
  }

  private ObjectNode slotsJson() {
    ObjectNode slots = JsonNodeFactory.instance.objectNode();
    for (SlotState s : SlotState.values()) {
      slots
          .putObject(s.name())
          .put("now", ring.current(s))
          .put("peak", ring.peak(s))
          .put("mean", reported(ring.mean(s)));
    }
    ArrayNode columns = slots.putArray("series_columns").add("ms");
    for (SlotState s : SlotState.values()) {
      columns.add(s.name());
    }
    ArrayNode series = slots.putArray("series");
    long[] millis = ring.seriesMillis();
    int[][] counts = ring.series();
    for (int i = 0; i < millis.length; i++) {
      ArrayNode row = series.addArray().add(millis[i]);
      for (int c : counts[i]) {
        row.add(c);
      }
    }
    return slots;
  }
}
