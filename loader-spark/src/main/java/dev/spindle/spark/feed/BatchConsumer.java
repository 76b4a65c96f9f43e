package dev.spindle.spark.feed;

/**
 * Where a feed task hands its batches: {@link VerifyingConsumer}, then (with {@code --serve}, or
 * feeders installed in the JVM) the rank's GPU feeder. Called on the task thread, one batch at a
 * time, each rank's batches of a task in plan order. The batch is owned by the task and valid only
 * during the call. An exception fails the task, and Spark retries it.
 */
@FunctionalInterface
public interface BatchConsumer {
  void accept(FeedBatch batch);
}
