/**
 * Sinks: where batches go. {@link dev.spindle.spark.sink.ArrowFileSink} appends record batches
 * to an Arrow IPC file on a Hadoop FileSystem (task thread); {@link
 * dev.spindle.spark.sink.OutputCommitter} (driver) makes exactly one attempt's file per partition
 * visible after the job succeeded, writes {@code _manifest.json} last, and removes everything else.
 */
package dev.spindle.spark.sink;
