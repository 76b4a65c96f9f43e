/**
 * Runnable examples on real data. {@code import-fashion-mnist}: Debian's Fashion-MNIST IDX files ─►
 * Spark tasks (one per shard) ─► WebDataset tar shards (PNG + .cls). {@code example fashion-mnist}:
 * import ─► {@code train} (a barrier stage; each rank's task starts the Python client's {@code
 * examples/fashion_mnist.py}, an ordinary training script, and feeds it) ─► the trainers train,
 * rank 0 evaluates on the test set ─► accuracy, wait time and train's report. {@code gen-sample}
 * (and {@code demo}): {@link dev.spindle.spark.example.GenSample} writes a deterministic synthetic
 * dataset of WebDataset tar shards ({@code SampleImages} draws its photographs) on a small pool.
 *
 * <p>What enters: the IDX files and command-line flags (for {@code gen-sample}: its options). What
 * leaves: tar shards, the ranks' JSON reports and the example's. Threads: the command's main thread
 * drives everything; Spark tasks write shards and serve the trainers ({@code
 * dev.spindle.spark.train}); {@code GenSample} writes shards on a pool of its own. An entry point,
 * like {@code cli}: nothing below it imports this package.
 */
package dev.spindle.spark.example;
