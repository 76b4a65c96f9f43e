package dev.spindle.spark.serve;

import dev.spindle.spark.plan.EpochPlan;

/**
 * The in-JVM consumer that stands in for the GPU feeder: checks that every batch it receives is the
 * planned one (row count, planned indices in order, padding count; {@link PlannedBatches}) and
 * counts what it took. A batch that is not the planned one fails the task with both sequences'
 * first difference. One per task attempt; task thread only.
 */
final class VerifyingConsumer implements BatchConsumer {
  private final EpochPlan plan;
  private final PlannedBatches planned = new PlannedBatches();
  private long batches;
  private long rows;

  VerifyingConsumer(EpochPlan plan) {
    this.plan = plan;
  }

  @Override
  public void accept(FeedBatch batch) {
    planned.check(plan.rank(batch.key().rank()), batch);
    batches++;
    rows += batch.rows();
  }

  long batches() {
    return batches;
  }

  long rows() {
    return rows;
  }
}
