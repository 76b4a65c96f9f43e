/**
 * Sinks: where batches go. A {@link dev.spindle.spark.sink.BatchFileSink} appends record batches to
 * one output file on a Hadoop FileSystem (task thread), in the job's {@link
 * dev.spindle.spark.sink.OutputFormat}: Arrow IPC ({@link dev.spindle.spark.sink.ArrowFileSink}) or
 * Parquet ({@link dev.spindle.spark.sink.ParquetFileSink}); {@link
 * dev.spindle.spark.sink.OutputCommitter} (driver) makes exactly one attempt's file per partition
 * visible after the job succeeded, writes {@code _manifest.json} last, and removes everything else.
 * The sinks checksum what they write as they write it ({@code CrcOutputStream}): the manifest
 * records each file's CRC-32C, an Arrow file's record batch checksums (kept in its footer) and its
 * stored index range, which readers check ({@code shard.PartChecks}). The driver holds the output
 * with {@link dev.spindle.spark.sink.OutputLock}, a lease it renews.
 */
package dev.spindle.spark.sink;
