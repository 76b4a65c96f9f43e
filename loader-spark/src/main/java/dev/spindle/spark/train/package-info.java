/**
 * The {@code train} job: the ranks' PyTorch training scripts started beside the executors that
 * serve them, supervised, and restarted from their checkpoints and loader states when they fail.
 *
 * <pre>
 *  driver: TrainJob ─► ManifestCache, plan (as feed) ─► TrainAttempts: per attempt one barrier
 *    stage of world tasks (ServeStage.requireSlots), each from a RestartPoint (the latest step every
 *    rank has a CheckpointRecord of, else the run's start: RankStart per rank)
 *  task r (TrainTask, task thread): TrainRendezvous (allGather: MASTER_ADDR/PORT, LOCAL_RANK…;
 *    none for one rank) ─► TrainerProcess: the script with torch.distributed's environment,
 *       SPINDLE_STATE, SPINDLE_CHECKPOINT, the Python client on PYTHONPATH (PythonClient); on a
 *       local master handed to an interpreter that imported torch beside Spark's start
 *       (WarmTrainers, started by the command; the rank's bridge listens for the run first)
 *    ─► per epoch: a RankLeg (serve) fed into the rank's feeder at once, ahead of the trainer
 *    TrainerDoor (thread): per leg, the previous leg's END taken ─► HELLO ─► serve ─► it leases
 *    TrainerWatch (daemon thread): the trainer's exit, another rank's failure, cancellation; mirrors
 *      its loader state and checkpoint record into the TrainStateStore (any Hadoop file system)
 *  ─► TrainRankResult per rank (TrainerExit) ─► restart (TrainAttempts) or TrainReport
 * </pre>
 *
 * <p><b>What enters:</b> an input URI, a world size, a training script and its arguments, {@link
 * dev.spindle.spark.train.TrainSettings} ({@code spark.spindle.train.*}: Python, state directory,
 * restarts, ranks per executor) and the feed settings every epoch uses. <b>What leaves:</b> the
 * trainers' own output (models, checkpoints: theirs), the state directory's per-rank files, and
 * {@code train}'s JSON report ({@link dev.spindle.spark.train.TrainReport}) on the driver.
 * <b>Threads:</b> the driver's main thread runs {@link dev.spindle.spark.train.TrainJob} and its
 * attempts; each rank's Spark task thread runs {@link dev.spindle.spark.train.TrainTask} and feeds
 * the rank's batches; one {@code TrainerDoor} thread per rank lets the trainer into each leg and
 * waits for its end; one {@code TrainerWatch} daemon thread per rank watches the trainer process.
 * Above {@link dev.spindle.spark.feed} and {@link dev.spindle.spark.serve}, whose plan and serving
 * it reuses; reached through the public API ({@code Spindle.feed(...).train}) and {@code
 * bin/spindle train}.
 */
package dev.spindle.spark.train;
