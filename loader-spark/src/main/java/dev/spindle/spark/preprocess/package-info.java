/**
 * The {@code preprocess} job: a dataset decoded once, into committed Arrow IPC or Parquet files
 * that {@code feed}, {@code train} and the {@code spindle} DataSource then read without decoding.
 *
 * <pre>
 *  driver                                        executors (Spark task threads)
 *  ShardCatalog ─► Manifest (manifest)           PreprocessTask, per shard group (ShardGroup):
 *  ShardGroup.plan: shards grouped                 ShardSamples (samples) ─► SamplePath: read
 *    by spark.spindle.partitionBytes ────────────►   (I/O pool) ─► decode, transform (shared CPU
 *  OutputLock, OutputCommitter (sink):               pool) ─► batch rows ─► BatchFileSink (sink):
 *    one job's lock on the output                    an attempt file per task, CommittedFile
 *  TaskResult per task ◄──────────────────────── (files, counts, quarantined samples, statistics)
 *  ─► failure budget ─► commit (_manifest.json last) or abort (JobGroupTasks: the group's tasks
 *     ended first) ─► JobReport
 * </pre>
 *
 * <p><b>What enters:</b> an input URI and the job's {@code spark.spindle.*} settings ({@link
 * dev.spindle.spark.preprocess.PreprocessSettings}: transforms, output format, batch size, failure
 * budget). <b>What leaves:</b> the committed output folder (part files, {@code _manifest.json},
 * quarantine list) and a {@link dev.spindle.spark.metrics.JobReport} on the driver; {@link
 * dev.spindle.spark.preprocess.PreprocessJob.JobFailure} when the failure budget is exceeded.
 * <b>Threads:</b> the driver's main thread runs {@link dev.spindle.spark.preprocess.PreprocessJob}
 * (and the lock's renewal thread, {@code sink.OutputLock}); each Spark task thread runs one {@link
 * dev.spindle.spark.preprocess.PreprocessTask} and writes its files, reading on the pipeline's I/O
 * pool and decoding on the executor's shared CPU pool ({@link dev.spindle.spark.samples}). Users
 * reach the job through the public API ({@code Spindle.preprocess}) and {@code bin/spindle
 * preprocess} ({@code cli}); nothing here imports either.
 */
package dev.spindle.spark.preprocess;
