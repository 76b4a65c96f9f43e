package dev.spindle.spark.serve;

/**
 * Where a feed task hands its batches: {@link VerifyingConsumer}, then (with {@code --serve}, or
 * feeders installed in the JVM) the rank's GPU feeder. Called on the task thread, one batch at a
 * time, each rank's batches of a task in plan order. The batch is owned by the task and valid only
 * during the call. An exception fails the task, and Spark retries it.
 */
@FunctionalInterface
public interface BatchConsumer {
  void accept(FeedBatch batch);

  /**
   * What the progress line calls this consumer when it bounds the job (the pipeline's consumer
   * stage): {@code sink} by default, {@code trainer} for the feeders trainers lease from.
   */
  default String stageName() {
    return "sink";
  }

  /**
   * A ring slot of the feeder of {@code rank} to decode that rank's next batch into, or null (the
   * default) when the consumer takes Arrow batches. Called on the task's source thread, in plan
   * order; may wait while the ring is full. The batch comes back to {@link #accept} as {@link
   * FeedBatch#slot()}, for the consumer to publish; a slot the task gives up is closed by it.
   */
  default dev.spindle.gpu.feed.SlotWriter claimSlot(int rank) throws InterruptedException {
    return null;
  }
}
