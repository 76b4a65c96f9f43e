package dev.spindle.spark.serve;

import java.io.Serializable;

/**
 * A run of one rank's batches that one task produces: batches {@code [fromBatch, toBatch)} of rank
 * {@code rank} in the epoch plan of the job. The task reports the digest of the rank's batches
 * {@code [digestFrom, toBatch)} ({@link BatchRun#digest()}): {@code digestFrom} is {@code
 * fromBatch}, or, for the slice that ends the rank's share of a run when another task produced its
 * first batches, the share's first batch, so that the driver receives the rank's whole digest from
 * one task.
 */
public record FeedSlice(int rank, int fromBatch, int toBatch, int digestFrom)
    implements Serializable {
  public FeedSlice {
    if (fromBatch < 0 || toBatch < fromBatch || digestFrom < 0 || digestFrom > fromBatch) {
      throw new IllegalArgumentException(
          "Invalid slice of rank "
              + rank
              + ": batches ["
              + fromBatch
              + ", "
              + toBatch
              + "), digest from batch "
              + digestFrom);
    }
  }

  /** A slice whose digest covers its own batches. */
  public FeedSlice(int rank, int fromBatch, int toBatch) {
    this(rank, fromBatch, toBatch, fromBatch);
  }
}
