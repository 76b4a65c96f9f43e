/**
 * The {@code feed} job: runs epoch plans ({@link dev.spindle.spark.plan}) on Spark and delivers
 * every trainer rank's batches, in plan order, to a consumer.
 *
 * <pre>
 *  driver                                          executors (Spark task threads)
 *  ManifestCache ─► Manifest (JSON + .bin, checked  FeedTask, per slice (rank, batches [a, b)):
 *                   against a fresh listing)          per group of readBatches batches:
 *  LoaderState ─► EpochPlan (refused before work;       RankPlan.indices (the slice, derived
 *    O(shards + ranks), no sample indices)                from its windows) ─► ReadPlan ─►
 *  FeedPartitions: (rank, batch) runs ─► partitions       ShardReader.open(positions): planned
 *                                                         samples only
 *  broadcast(plan, manifest) ───────────────────────►  SamplePath: read (RowSource, I/O pool) ─►
 *                                                        decode (shared CPU pool, ≤ threads of
 *                                                        this task, input order) ─► batch rows
 *                                                      FeedRun (task thread): ImageBatch ─►
 *                                                        FeedBatch(BatchKey) ─► SliceAccount
 *                                                        (checked against the plan, hashed) ─►
 *                                                        DeliveryRegistry.claim ─► consumer
 *  FeedLedger ◄──── TaskOutcome (a BatchRun per slice: keys, counts, digest; quarantine) ──┘
 *    each BatchKey once; per rank: every planned batch, the digest from its last run
 *  ─► FeedResult: JobReport (per rank and epoch) + LoaderState (for --resume)
 * </pre>
 *
 * <p><b>What enters:</b> an input URI, a world size, plan settings from {@code spark.spindle.*}
 * keys, optionally a loader state. <b>What leaves:</b> {@link dev.spindle.spark.feed.FeedBatch}es
 * to a {@link dev.spindle.spark.feed.BatchConsumer} on the executors ({@code VerifyingConsumer},
 * which checks each batch against the plan and counts, then, with {@code --serve}, the rank's
 * feeder: see {@code RankServeTask}, one barrier task per rank, and {@code ExecutorServing}, the
 * executor's bridges and feeders), and a report plus the loader state on the driver.
 * <b>Threads:</b> the driver's main thread runs {@link dev.spindle.spark.feed.FeedJob}; each Spark
 * task thread runs one task and hands batches to the consumer; reading runs on the pipeline
 * engine's I/O pool and decoding on the executor JVM's shared CPU pool ({@code
 * dev.spindle.spark.pipeline.ExecutorPools}), on the sample path that {@code preprocess} and the
 * {@code spindle} DataSource share ({@code dev.spindle.spark.samples}, keeping bad samples in
 * place).
 *
 * <h2>Exactly once</h2>
 *
 * A batch's identity is its {@code BatchKey (epoch, leg, rank, batch)} and its content the planned
 * indices, both fixed by the plan. The task that produces a batch checks it against the plan before
 * anyone has it ({@code SliceAccount}: a wrong batch fails the task, naming it) and hashes the
 * indices it produced; it reports per slice one {@code BatchRun} (the range of keys, counts, the
 * digest), never the indices, so the driver's work and memory per epoch are O(ranks + slices), not
 * O(samples). The slice that ends a rank's share hashes the share's earlier batches too (derived
 * from the plan when another task produced them), so each rank's digest comes whole from one task.
 * A retried or speculative attempt in the same JVM recomputes the same keys and does not hand over
 * a batch that JVM's consumer already took ({@code DeliveryRegistry}); the driver's ledger takes
 * every key once (a run reported twice must carry the same digest) and fails the job if a rank
 * lacks a planned batch. When an executor dies, its consumer dies with it; the retried tasks
 * deliver those batches on another executor.
 *
 * <h2>Bad samples</h2>
 *
 * A rank's batch always has {@code batchSize} rows: equal batch counts and shapes on every rank are
 * what keeps DDP from hanging. A sample that cannot be read or decoded is quarantined (listed in
 * the report with shard, key, planned index and reason; counted against {@code
 * spark.spindle.maxFailures}) and its row becomes a stand-in: the image of the batch's first good
 * row (zeros when none is good), the sample's own key and planned index, and the ignored label
 * -100, flagged in {@link dev.spindle.spark.feed.FeedBatch#substituted()} so the trainer gives it
 * zero weight, as it does for padding (which also carries label -100). The digest covers the
 * planned indices, so it is the same whether or not a sample was bad.
 */
package dev.spindle.spark.feed;
