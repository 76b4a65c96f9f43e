package dev.spindle.spark.feed;

import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.RankPlan;
import java.util.Arrays;

/**
 * The in-JVM consumer that stands in for the GPU feeder: checks that every batch it receives is
 * the planned one (row count, planned indices in order, padding count) and counts what it took.
 * A batch that is not the planned one fails the task with both sequences' first difference.
 * One per task attempt; task thread only.
 */
final class VerifyingConsumer implements BatchConsumer {
  /** Batches derived from the plan at a time: a task's batches mostly come in order. */
  private static final int CHUNK = 64;

  private final EpochPlan plan;
  private long batches;
  private long rows;
  private int chunkRank = -1;
  private int chunkFrom;
  private long[] chunk = new long[0];

  VerifyingConsumer(EpochPlan plan) {
    this.plan = plan;
  }

  @Override
  public void accept(FeedBatch batch) {
    RankPlan rank = plan.rank(batch.key().rank());
    int k = batch.key().batch();
    long[] expected = planned(rank, k);
    long[] got = batch.indices();
    if (!Arrays.equals(expected, got)) {
      int at = Arrays.mismatch(expected, got);
      throw new IllegalStateException("Batch " + batch.key() + " is not the planned one: "
          + got.length + " rows (planned " + expected.length + "), first difference at row "
          + at + (at >= 0 && at < Math.min(got.length, expected.length)
              ? ": index " + got[at] + ", planned " + expected[at] : ""));
    }
    if (batch.padded() != rank.paddedIn(k)) {
      throw new IllegalStateException("Batch " + batch.key() + " has " + batch.padded()
          + " padded rows, planned " + rank.paddedIn(k));
    }
    batches++;
    rows += got.length;
  }

  /** Batch {@code k} of {@code rank}, derived {@link #CHUNK} batches at a time. */
  private long[] planned(RankPlan rank, int k) {
    int size = rank.batchSize();
    int at = (k - chunkFrom) * size;
    if (rank.rank() != chunkRank || k < chunkFrom || at + size > chunk.length) {
      chunkRank = rank.rank();
      chunkFrom = k;
      chunk = rank.indices(k, Math.min(rank.batches(), k + CHUNK));
      at = 0;
    }
    return Arrays.copyOfRange(chunk, at, at + size);
  }

  long batches() {
    return batches;
  }

  long rows() {
    return rows;
  }
}
