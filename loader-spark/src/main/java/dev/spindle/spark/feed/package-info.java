/**
 * The {@code feed} job, driver side: runs epoch plans ({@link dev.spindle.spark.plan}) on Spark and
 * checks that every trainer rank got its batches, in plan order; the executors' side, which makes
 * and delivers the batches, is {@link dev.spindle.spark.serve}.
 *
 * <pre>
 *  driver (main thread)                              executors ({@code serve})
 *  ManifestCache ─► Manifest (manifest: JSON + .bin, checked against a fresh listing)
 *    (a mixture, spark.spindle.mix: MixedInput lays its sources' manifests end to end)
 *  LoaderState ─► EpochPlan (refused before work; O(shards + ranks), no sample indices)
 *  FeedPartitions: (rank, batch) runs ─► partitions
 *  broadcast(plan, manifest) ─────────────────────► FeedTask per partition (or, with --serve,
 *                                                     ServeStage: one RankServeTask per rank)
 *  FeedLedger ◄──── TaskOutcome (a BatchRun per slice: keys, counts, digest; quarantine) ──┘
 *    each BatchKey once; per rank: every planned batch, the digest from its last run
 *  ─► FeedResult: JobReport (per rank and epoch) + LoaderState (for --resume)
 * </pre>
 *
 * <p><b>What enters:</b> a {@link dev.spindle.spark.feed.FeedRequest}: an input URI, a world size,
 * plan settings from {@code spark.spindle.*} keys, optionally a loader state. <b>What leaves:</b> a
 * {@link dev.spindle.spark.feed.FeedResult}: the report and the loader state to resume from; the
 * batches themselves leave on the executors, to the consumer of each task ({@code serve}).
 * <b>Threads:</b> the driver's main thread runs {@link dev.spindle.spark.feed.FeedJob}, one run at
 * a time per SparkSession; the ledger is filled on that thread from the collected task outcomes.
 * {@code train} ({@link dev.spindle.spark.train}) runs its epochs through this job's manifest and
 * plan steps; users reach both through the public API ({@code Spindle.feed}) and {@code bin/spindle
 * feed} ({@code cli}), which this package does not import.
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
 */
package dev.spindle.spark.feed;
