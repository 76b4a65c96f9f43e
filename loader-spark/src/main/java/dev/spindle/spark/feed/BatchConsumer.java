package dev.spindle.spark.feed;

/**
 * Where a feed task hands its batches: the GPU feeder of the executor, or (until it is wired to
 * this job) {@link VerifyingConsumer}. Called on the task thread, one batch at a time, each
 * rank's batches of a task in plan order. The batch is owned by the task and valid only during
 * the call. An exception fails the task, and Spark retries it.
 */
@FunctionalInterface
public interface BatchConsumer {
  void accept(FeedBatch batch);
}
