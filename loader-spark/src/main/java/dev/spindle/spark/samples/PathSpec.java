package dev.spindle.spark.samples;

import dev.spindle.spark.pipeline.FailureBudget;
import java.util.Objects;

/**
 * How one task runs the sample path. Immutable.
 *
 * @param owner the pipeline's name in logs and statistics, e.g. {@code preprocess-p3-a17}
 * @param images how rows get their uint8 pixels (decoded by a transform, or a preprocess output's
 *     stored pixels, checked and copied), or null to pass the samples' bytes through (samples are
 *     still checked: one with a problem is bad)
 * @param batchSize rows per batch
 * @param concurrency samples in the decode stage at once (a limit, not a thread count: decoding
 *     runs on the executor-wide CPU pool)
 * @param bad what happens to a bad sample
 * @param budget how many bad samples the path tolerates before it stops ({@link
 *     BadSamples#QUARANTINE} only)
 */
public record PathSpec(
    String owner,
    BatchImages images,
    int batchSize,
    int concurrency,
    BadSamples bad,
    FailureBudget budget) {

  /** What the path does with a sample it cannot use. */
  public enum BadSamples {
    /**
     * Dropped from the flow and listed ({@link SamplePath#quarantine()}); batches hold good rows
     * only. Past the budget the path stops with a {@link
     * dev.spindle.spark.pipeline.PipelineFailure}.
     */
    QUARANTINE,
    /** Kept in its place as a row with a problem; batches keep the source's grouping. */
    KEEP
  }

  public PathSpec {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(bad, "bad");
    if (batchSize <= 0) {
      throw new IllegalArgumentException("Invalid batch size: " + batchSize + " (must be > 0)");
    }
    if (concurrency <= 0) {
      throw new IllegalArgumentException("Invalid concurrency: " + concurrency + " (must be > 0)");
    }
    if (bad == BadSamples.QUARANTINE) {
      Objects.requireNonNull(budget, "budget");
    }
  }

  /** Bad samples are quarantined against {@code budget}. */
  public static PathSpec quarantining(
      String owner, BatchImages images, int batchSize, int concurrency, FailureBudget budget) {
    return new PathSpec(owner, images, batchSize, concurrency, BadSamples.QUARANTINE, budget);
  }

  /** Bad samples stay in place as rows with a problem. */
  public static PathSpec keeping(String owner, BatchImages images, int batchSize, int concurrency) {
    return new PathSpec(owner, images, batchSize, concurrency, BadSamples.KEEP, null);
  }

  /**
   * The decode stage's name: "decode", or "check" when nothing is decoded there (the path passes
   * the bytes through, or holds a preprocess output's stored pixels, which it only checks): a
   * progress line or report must not name decoding as a bottleneck of a job that decodes nothing.
   */
  String stage() {
    return images == null || !images.decodes() ? "check" : "decode";
  }
}
