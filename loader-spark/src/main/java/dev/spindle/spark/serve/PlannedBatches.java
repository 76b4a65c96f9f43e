package dev.spindle.spark.serve;

import dev.spindle.spark.plan.Digest;
import dev.spindle.spark.plan.RankPlan;
import java.util.Arrays;

/**
 * A task's view of the plan's batches: derives them from the plan {@link #CHUNK} batches at a time
 * (a task's batches mostly come in order), checks a produced batch against them, and hashes
 * stretches the task did not produce. One per task attempt; task thread only.
 */
public final class PlannedBatches {
  /** Batches derived from the plan at a time. */
  static final int CHUNK = 64;

  /** Entries derived at a time when hashing a stretch: 2 MiB of indices. */
  private static final int HASH_ENTRIES = 1 << 18;

  private int chunkRank = -1;
  private int chunkFrom;
  private long[] chunk = new long[0];

  /** Where each batch of the chunk begins in it, then its end. */
  private int[] chunkRows = new int[1];

  /**
   * Fails, naming the batch and the first difference, unless {@code batch} is batch {@code
   * batch.key().batch()} of {@code rank} as planned: its indices in order and its padding.
   *
   * @return the batch's {@code index} column, a new array
   */
  long[] check(RankPlan rank, FeedBatch batch) {
    int k = batch.key().batch();
    long[] expected = planned(rank, k);
    long[] got = batch.indices();
    if (!Arrays.equals(expected, got)) {
      int at = Arrays.mismatch(expected, got);
      throw new IllegalStateException(
          "Batch "
              + batch.key()
              + " is not the planned one: "
              + got.length
              + " rows (planned "
              + expected.length
              + "), first difference at row "
              + at
              + (at >= 0 && at < Math.min(got.length, expected.length)
                  ? ": index " + got[at] + ", planned " + expected[at]
                  : ""));
    }
    if (batch.padded() != rank.paddedIn(k)) {
      throw new IllegalStateException(
          "Batch "
              + batch.key()
              + " has "
              + batch.padded()
              + " padded rows, planned "
              + rank.paddedIn(k));
    }
    return got;
  }

  /**
   * Appends the planned indices of {@code rank}'s batches {@code [from, to)} to {@code digest},
   * derived a few windows at a time: at most 2 MiB of indices at once, whatever the stretch.
   */
  public static void hash(RankPlan rank, int from, int to, Digest digest) {
    int step = Math.max(1, HASH_ENTRIES / rank.batchSize());
    for (int a = from; a < to; a += step) {
      long[] part = rank.indices(a, (int) Math.min(to, (long) a + step));
      digest.update(part, 0, part.length);
    }
  }

  /** Batch {@code k} of {@code rank}, derived {@link #CHUNK} batches at a time. */
  private long[] planned(RankPlan rank, int k) {
    if (rank.rank() != chunkRank || k < chunkFrom || k >= chunkFrom + chunkRows.length - 1) {
      chunkRank = rank.rank();
      chunkFrom = k;
      int to = Math.min(rank.batches(), k + CHUNK);
      chunk = rank.indices(k, to);
      chunkRows = new int[to - k + 1];
      for (int b = k; b < to; b++) { // a token budget's batches vary in rows
        chunkRows[b - k + 1] = chunkRows[b - k] + rank.batchRows(b);
      }
    }
    return Arrays.copyOfRange(chunk, chunkRows[k - chunkFrom], chunkRows[k - chunkFrom + 1]);
  }
}
