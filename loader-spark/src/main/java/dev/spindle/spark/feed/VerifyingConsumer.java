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
  private final EpochPlan plan;
  private long batches;
  private long rows;

  VerifyingConsumer(EpochPlan plan) {
    this.plan = plan;
  }

  @Override
  public void accept(FeedBatch batch) {
    RankPlan rank = plan.rank(batch.key().rank());
    int k = batch.key().batch();
    long[] expected = rank.batch(k);
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

  long batches() {
    return batches;
  }

  long rows() {
    return rows;
  }
}
