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
 *
 * <p>On object stores (S3 through S3A, GCS, Azure) the protocol is the same, by decision: its
 * guarantee rests on the manifest being written in one step (a single PUT, visible whole to every
 * reader: {@code AtomicFiles}), not on renames being atomic. A rename there is a server-side copy
 * and a delete; each part still appears whole under its new, job-tagged name, and the old output's
 * files are deleted only after the manifest switch. A driver killed mid-commit leaves the old
 * manifest, copied parts that no manifest names and {@code _temporary/}, which the next job's
 * {@code setup()} removes; readers that trust the manifest never see them, readers that list the
 * folder can (as on any file system, for longer). Spark's S3A committers would give no stronger
 * promise (they complete uploads one by one at job commit), and listing parts under {@code
 * _temporary/} from the manifest without copying would put committed data in a scratch folder.
 * {@code S3CommitSuite} kills a driver mid-commit to a real S3 server; docs/guide/object-stores.md.
 */
package dev.spindle.spark.sink;
