/**
 * Runnable examples on real data. {@code import-fashion-mnist}: Debian's Fashion-MNIST IDX files
 * ─► Spark tasks (one per shard) ─► WebDataset tar shards (PNG + .cls). {@code example
 * fashion-mnist}: import ─► one shared-memory feeder per rank + the trainer bridge ─► W PyTorch
 * trainer processes (DDP, gloo, CPU) ─► {@code feed} job whose tasks offer batches to the
 * feeders ─► trainers train, evaluate on the test set and report accuracy and wait time.
 *
 * <p>What enters: the IDX files and command-line flags. What leaves: tar shards and a JSON report.
 * Threads: the command's main thread drives everything; Spark task threads write shards and offer
 * batches; the bridge's threads serve the trainers; one watcher thread per trainer process.
 */
package dev.spindle.spark.example;
