package dev.spindle.gpu.bridge;

import dev.spindle.gpu.device.SharedMemoryDevice;
import dev.spindle.gpu.feed.GpuFeeder;

/**
 * What one rank of a {@link BridgeServer} receives: its feeder and where its batch numbers start.
 * Immutable, any thread; the feeder stays the caller's (close it after the bridge).
 *
 * @param rank the trainer rank, 0 ≤ rank &lt; world size
 * @param feeder its feeder, on a {@link SharedMemoryDevice} or a CUDA device
 * @param firstBatch number of the feeder's first batch in the rank's epoch (batches consumed when
 *     the feed job started: non-zero after a resume)
 * @param loaderState the loader state JSON the feed job started from, handed to trainers as the
 *     base of their {@code state_dict()}, and whose plan a trainer's state must be of to resume (""
 *     if none: trainers' states are not compared)
 * @param endBatch the number after the rank's last planned batch (its batches are {@code
 *     firstBatch..endBatch-1}): the trainer gets END after batch {@code endBatch - 1} (or when the
 *     feeder's input ends first), and a resume point beyond it is refused; {@link #UNKNOWN_END}
 *     when not known (END comes with the end of input; only resume points below -1 are refused)
 */
public record RankFeed(
    int rank, GpuFeeder feeder, long firstBatch, String loaderState, long endBatch) {
  /** {@link #endBatch} of a feed whose batch count is not known. */
  public static final long UNKNOWN_END = Long.MAX_VALUE;

  /** A feed whose batch count is not known ({@link #UNKNOWN_END}). */
  public RankFeed(int rank, GpuFeeder feeder, long firstBatch, String loaderState) {
    this(rank, feeder, firstBatch, loaderState, UNKNOWN_END);
  }

  /** Validates. */
  public RankFeed {
    if (rank < 0) {
      throw new IllegalArgumentException("Invalid rank: " + rank + " (must be >= 0)");
    }
    if (firstBatch < 0) {
      throw new IllegalArgumentException("Invalid first batch: " + firstBatch + " (must be >= 0)");
    }
    if (endBatch < firstBatch) {
      throw new IllegalArgumentException(
          "Invalid end batch for rank "
              + rank
              + ": "
              + endBatch
              + " (must be >= the first batch, "
              + firstBatch
              + ")");
    }
    ServedMemory.requireMappable(rank, feeder);
    if (feeder.config().maxRows() > BatchKeys.MAX_ROWS) {
      throw new IllegalArgumentException(
          "Invalid feeder for rank "
              + rank
              + ": batches of "
              + feeder.config().maxRows()
              + " rows (a BATCH message carries at most "
              + BatchKeys.MAX_ROWS
              + ")");
    }
    loaderState = loaderState == null ? "" : loaderState;
  }
}
