package dev.spindle.spark.serve;

import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.metrics.Timeline;
import dev.spindle.spark.shard.CacheCounts;
import dev.spindle.spark.shard.IoCounts;
import java.io.Serializable;
import java.util.List;

/**
 * What one feed task attempt reports back to the driver: one {@link BatchRun} per slice, so its
 * size grows with the slices (and the quarantined samples), never with the batches' rows.
 *
 * @param runs the runs of batches it produced, one per slice, in production order
 * @param quarantined samples it could not use (planned index, shard, key, reason)
 * @param samplesRead encoded samples read from shards (repeats read once)
 * @param bytesIn encoded bytes read (a preprocess output's: stored pixel bytes)
 * @param imagesDecoded images it decoded and transformed (0 for a preprocess output's stored rows)
 * @param firstBatchEpochMs wall-clock time its first batch reached the consumer, or 0
 * @param served how its rank was served ({@code feed --serve}), or null
 * @param hostCopyBytes image bytes it copied on the host on their way to the consumer: stored
 *     pixels copied out of the file by the reader and into their rows, stand-ins copied from a good
 *     row, Arrow batches copied into a feeder's slots (its staging copies); decoded pixels are
 *     written in place and count nothing
 * @param rowBytes bytes of one image (H·W·C), the unit of {@link HostCopies#perSample}
 * @param io what its shard readers asked of storage (the reports' {@code "io"})
 * @param cache what the executor-local shard cache did for its shard opens ({@link IoReport})
 */
public record TaskOutcome(
    List<BatchRun> runs,
    List<QuarantineRecord> quarantined,
    long samplesRead,
    long bytesIn,
    long imagesDecoded,
    long firstBatchEpochMs,
    ServedRank served,
    long hostCopyBytes,
    long rowBytes,
    IoCounts io,
    CacheCounts cache)
    implements Serializable {

  /** An outcome of tasks that counted no storage reads. */
  public TaskOutcome(
      List<BatchRun> runs,
      List<QuarantineRecord> quarantined,
      long samplesRead,
      long bytesIn,
      long imagesDecoded,
      long firstBatchEpochMs,
      ServedRank served,
      long hostCopyBytes,
      long rowBytes) {
    this(
        runs,
        quarantined,
        samplesRead,
        bytesIn,
        imagesDecoded,
        firstBatchEpochMs,
        served,
        hostCopyBytes,
        rowBytes,
        IoCounts.NONE,
        CacheCounts.NONE);
  }

  /** An attempt that produced nothing (a served rank whose trainer had every batch already). */
  static TaskOutcome empty() {
    return new TaskOutcome(List.of(), List.of(), 0, 0, 0, 0, null, 0, 0);
  }

  /** This outcome with {@code bytes} more host copies (a feeder's staging copies). */
  TaskOutcome plusHostCopies(long bytes) {
    return new TaskOutcome(
        runs,
        quarantined,
        samplesRead,
        bytesIn,
        imagesDecoded,
        firstBatchEpochMs,
        served,
        hostCopyBytes + bytes,
        rowBytes,
        io,
        cache);
  }

  /** What it did, for the report's timeline: images are the delivered batches' samples. */
  public Timeline.Counts timelineCounts() {
    long images = runs.stream().mapToLong(BatchRun::deliveredRows).sum();
    return new Timeline.Counts(samplesRead, images, bytesIn, quarantined.size());
  }

  TaskOutcome withServed(ServedRank s) {
    return new TaskOutcome(
        runs,
        quarantined,
        samplesRead,
        bytesIn,
        imagesDecoded,
        firstBatchEpochMs,
        s,
        hostCopyBytes,
        rowBytes,
        io,
        cache);
  }
}
