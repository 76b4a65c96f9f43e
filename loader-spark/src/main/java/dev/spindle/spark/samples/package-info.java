/**
 * The one executor-side sample path: every Spindle entry point that turns shards into Arrow batches
 * inside an executor runs it, and adds only its own end.
 *
 * <pre>
 *  source "read" (I/O pool)   ─► pipe "decode" (executor-wide CPU pool,  ─► aggregate "batch"
 *  an Iterator of               ≤ concurrency in flight, input order):      batchSize rows
 *  IndexedSamples               decode + transform into uint8 pixels         │
 *  (ShardSamples: whole         (a preprocess output's stored pixels: size   ▼ task thread
 *  shards; ...)                 checked only; "check": bytes pass through)
 *  serve.RowSource:             bad sample: QUARANTINE (dropped, listed,   SamplePath.next()
 *  planned rows)                budget) or KEEP (a row with a problem)     SamplePath.fill ─► ImageBatch
 *                                                                            │
 *  sinks:  preprocess: ArrowFileSink (committed files)  serve: FeedRun (stand-ins, a feeder or the
 *          bridge)  DataSource: Spark ColumnarBatches of ArrowColumnVectors (sql.ScanColumns)
 * </pre>
 *
 * <p><b>Enters:</b> {@link dev.spindle.spark.samples.IndexedSample}s from the caller's source
 * (pulled on one I/O-pool thread) and a {@link dev.spindle.spark.samples.PathSpec}, whose {@link
 * dev.spindle.spark.samples.BatchImages} say whether rows are decoded or, for a {@code preprocess}
 * output, its stored pixels copied by {@code fill} without any decode. <b>Leaves:</b> batches of
 * {@link dev.spindle.spark.samples.Decoded} rows on the task thread, the quarantine list, pipeline
 * statistics and decode time. <b>Threads:</b> the pipeline engine's ({@code
 * dev.spindle.spark.pipeline}); decode runs on the executor-wide CPU pool that every task shares.
 * <b>Memory:</b> an item with a {@link dev.spindle.spark.samples.RowTarget} (a row of a {@link
 * dev.spindle.spark.samples.RowBatch}: the feed's planned rows, {@code serve.BatchTargets}; {@code
 * bench images}' rows) is decoded straight into its row of the batch it is delivered in, a ring
 * slot or a pooled batch, and its {@code Decoded} holds no pixels (a stored row is copied there
 * once); otherwise decoded pixels come from the task's Arrow allocator, a row's buffer belongs to
 * whoever holds the row and is released by closing it, and {@code fill} copies it into the caller's
 * {@code ImageBatch} (preprocess, the DataSource).
 */
package dev.spindle.spark.samples;
