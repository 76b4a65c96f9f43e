/**
 * Runnable examples on real data. {@code import-fashion-mnist}: Debian's Fashion-MNIST IDX files ─►
 * Spark tasks (one per shard) ─► WebDataset tar shards (PNG + .cls). {@code example fashion-mnist}:
 * import ─► {@code train} (a barrier stage; each rank's task starts the Python client's {@code
 * examples/fashion_mnist.py}, an ordinary training script, and feeds it) ─► the trainers train,
 * rank 0 evaluates on the test set ─► accuracy, wait time and train's report.
 *
 * <p>What enters: the IDX files and command-line flags. What leaves: tar shards, the ranks' JSON
 * reports and the example's. Threads: the command's main thread drives everything; Spark tasks
 * write shards and serve the trainers ({@code dev.spindle.spark.feed}).
 */
package dev.spindle.spark.example;
