/**
 * The executor side of {@code feed} and {@code train}: each Spark task turns its slices of an epoch
 * plan into batches, checks each against the plan, and hands it to a consumer: the in-JVM verifier,
 * or, with {@code --serve} (and always in {@code train}), the rank's feeder, which trainers lease
 * over the trainer bridge ({@code dev.spindle.gpu}). Also the stage that runs one serving task per
 * rank ({@code ServeStage}, on the driver).
 *
 * <pre>
 *  FeedTask (task thread), per slice (rank, batches [a, b)) of FeedInputs (plan, manifest):
 *    per group of readBatches batches: RankPlan.indices ─► ReadPlan ─► RowSource: planned samples
 *    only (ShardReader.open(positions, IoSettings), on the I/O pool: every shard of the group
 *    opened first, so an indexed tar's ranged reads run at once on the executor's range-read
 *    threads; IoCounters ─► TaskOutcome.io, the report's "io"); each batch's first row claims the batch
 *    it is decoded into (BatchTargets: a slot of the rank's GpuFeeder ring when the consumer is a
 *    FeederConsumer, waiting while the ring is full; else a pooled Arrow batch)
 *    ─► SamplePath (samples): decode on the shared CPU pool (≤ threads of this task, input order)
 *       straight into each row of that batch: no per-sample buffer, no copy afterwards
 *    ─► FeedRun (task thread): stand-ins, labels, keys, indices, weights ─► FeedBatch(BatchKey)
 *       ─► SliceAccount (checked against the plan, hashed: PlannedBatches)
 *       ─► DeliveryRegistry.claim ─► BatchConsumer: VerifyingConsumer (plain feed), or
 *         FeederConsumer ─► publishes the slot (trainers lease it; on the host device they map the
 *         very memory the decode wrote)
 *  ─► TaskOutcome: a BatchRun per slice (keys, counts, digest), quarantined samples, ServedRank,
 *     the shard cache's counts (IoReport sums them into the report's "io" on the driver)
 *
 *  --serve: ServeStage (driver) ─► barrier stage, task r = RankServeTask for rank r, one RankLeg:
 *    ExecutorServing: this JVM's bridge per socket (BridgeServer) and feeders ─► the trainer's
 *    HELLO (resume point) ─► FeedTask over [resume, stop) into the rank's feeder ─► the trainer
 *    took END ─► TaskOutcome with ServedRank; FeederReport sums ranks' feeders for the report
 *  train: the same RankLeg steps, overlapped (dev.spindle.spark.train: the feed ahead of HELLO)
 *  samples without an image (declared fields without 'image'): nothing decoded (the path only
 *    checks samples), pooled Arrow batches without an image column (ImageBatch.withoutImages),
 *    offered as they are to a feeder without images (FeederConfig.withoutImages)
 * </pre>
 *
 * <p><b>What enters:</b> a {@link dev.spindle.spark.serve.FeedTask} (shipped from the driver: the
 * run id, the broadcast {@link dev.spindle.spark.serve.FeedInputs}, {@link
 * dev.spindle.spark.serve.FeedSettings}, the Hadoop configuration) and the task's {@link
 * dev.spindle.spark.serve.FeedSlice}s; for serving, {@link dev.spindle.spark.serve.ServeSettings}
 * and a trainer that connects to the rank's socket. <b>What leaves:</b> {@link
 * dev.spindle.spark.serve.FeedBatch}es to a {@link dev.spindle.spark.serve.BatchConsumer} (the
 * batch, an Arrow root or a written ring slot, belongs to the task and is valid only during {@code
 * accept}; a feeder publishes its slot, or copies an Arrow root into one), and one {@link
 * dev.spindle.spark.serve.TaskOutcome} per task to the driver, whose size grows with the slices,
 * never with the rows. <b>Threads:</b> each Spark task thread runs one task and hands batches to
 * the consumer (blocking while a rank's ring is full: a slow trainer back-pressures the readers);
 * reading runs on the pipeline engine's I/O pool and decoding on the executor JVM's shared CPU pool
 * ({@code dev.spindle.spark.pipeline.ExecutorPools}), on the sample path that {@code preprocess}
 * and the {@code spindle} DataSource share ({@code dev.spindle.spark.samples}, keeping bad samples
 * in place); {@code ExecutorServing}'s bridges and feeders live as long as the executor JVM and are
 * shared by the serving tasks of every epoch and run; {@code ServeStage} runs on the driver's main
 * thread. The driver's side of {@code feed} (its plan, partitions and ledger) is {@link
 * dev.spindle.spark.feed}; {@code train}'s trainer processes are {@link dev.spindle.spark.train}:
 * both sit above this package.
 *
 * <p>A {@link dev.spindle.spark.serve.ConsumerHook}, installed only by tests and benchmarks, may
 * wrap every task's consumer (to slow batches down for fault tests; {@code bench io} hashes each
 * batch delivered); the product path never sleeps.
 *
 * <h2>Bad samples</h2>
 *
 * A rank's batch always has {@code batchSize} rows: equal batch counts and shapes on every rank are
 * what keeps DDP from hanging. A sample that cannot be read or decoded is quarantined (listed in
 * the report with shard, key, planned index and reason; counted against {@code
 * spark.spindle.maxFailures}) and its row becomes a stand-in: the image of the batch's first good
 * row (zeros when none is good), the sample's own key and planned index, and the ignored label
 * -100, flagged in {@link dev.spindle.spark.serve.FeedBatch#substituted()} so the trainer gives it
 * zero weight, as it does for padding (which also carries label -100). The digest covers the
 * planned indices, so it is the same whether or not a sample was bad.
 */
package dev.spindle.spark.serve;
