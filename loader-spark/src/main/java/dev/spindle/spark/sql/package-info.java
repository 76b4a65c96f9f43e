/**
 * The DataSource V2 {@code spindle}: {@code spark.read.format("spindle").load(uri)} and {@code
 * SELECT ... FROM spindle.`uri`} over anything {@code preprocess} reads, as Spark columnar batches.
 *
 * <pre>
 *  driver                                        executors (Spark task threads)
 *  SpindleDataSource (TableProvider, "spindle")
 *    ScanOptions: options + session conf ─► ScanSettings (invalid values fail here)
 *  SpindleTable ─► SpindleScanBuilder (column pruning) ─► SpindleScan (metrics)
 *  SpindleBatch: ManifestCache (+ ClusterShardCounter)
 *    ─► ShardGroup.plan(partitionBytes) ─► SpindleInputPartition[] ─► SpindleReaderFactory
 *    or, option mix: MixedInput ─► EpochPlan (one rank, batches of one) cut into consecutive
 *       stretches ─► MixInputPartition[]
 *                                                 ─► SpindlePartitionReader (columnar):
 *                                                    PartSamples (ShardSamples | MixedSamples)
 *                                                    ─► SamplePath ─► ScanColumns
 *                                                    (DecodedColumns | EncodedColumns)
 *                                                    ─► ColumnarBatch of ArrowColumnVectors
 *                                                    quarantine JSON (QuarantineFiles), metrics
 *  SQL: SpindleExtensions (session extension service) ─► ResolveSpindlePaths (spindle.`uri`)
 * </pre>
 *
 * <p><b>Enters:</b> an input URI (or a mixture: option {@code mix}) and options. <b>Leaves:</b>
 * {@code ColumnarBatch}es whose columns are Arrow vectors owned by the partition reader (reused
 * batch by batch; see {@link dev.spindle.spark.sql.ScanSchema} for the columns), task metrics,
 * quarantine files. <b>Threads:</b> planning on the driver's query thread; reading on Spark task
 * threads, with decoding on the executor-wide CPU pool of the shared sample path ({@code
 * dev.spindle.spark.samples}). Public: {@link dev.spindle.spark.sql.SpindleDataSource}, {@link
 * dev.spindle.spark.sql.SpindleExtensions} and {@link dev.spindle.spark.sql.ScanMetrics} (Spark
 * instantiates them by name); the rest is package-private.
 */
package dev.spindle.spark.sql;
