/**
 * The thread pipeline every Spindle job runs on inside an executor: a source, {@code pipe} stages
 * with their own concurrency, an optional {@code aggregate}, and the consumer's iterator.
 *
 * <pre>
 *  source        pipe "decode"      pipe "resize"      aggregate         consumer
 *  iterator ─► Q ─► op × c1 ─► Q ─► op × c2 ─► Q ─► batch of n ─► Q ─► hasNext()/next()
 *  (an I/O       (CPU pool,         (CPU pool,         (in drain)        (caller's thread)
 *  pool thread)  ≤ c1 in flight)    ≤ c2 in flight)
 *
 *  Q: a queue bounded in items and in bytes; a full Q holds back the stage before it.
 * </pre>
 *
 * <p><b>What enters:</b> an {@link java.util.Iterator} of work items (e.g. the samples of a shard),
 * pulled on one thread of the I/O pool of {@link dev.spindle.spark.pipeline.ExecutorPools}. <b>What
 * leaves:</b> results (or {@code List}s of results after an aggregate) through {@link
 * dev.spindle.spark.pipeline.PipelineIterator}, on the consumer's thread, plus {@link
 * dev.spindle.spark.pipeline.PipelineStats} and the quarantine list.
 *
 * <p><b>Threads.</b> Ops run on the executor-wide CPU pool (or the I/O pool for {@code pipeIo}); a
 * stage's concurrency limits its items in flight, it is not a thread count. No thread is started
 * per pipeline or per stage: a stage is moved forward by a {@code drain} that whichever thread
 * changed its situation runs (a finished op, an upstream stage that added input, the consumer or a
 * downstream stage that made room), one thread at a time per stage. Drains never block and never
 * run ops; CPU pool threads never block on queues, so any number of pipelines can share the pool
 * without deadlock. Only the source thread and the consumer wait, in slices of at most 50 ms that
 * re-check the stop flag.
 *
 * <p><b>Ownership.</b> Items inside the pipeline belong to it; an item handed out by {@code next()}
 * belongs to the caller. When the pipeline drops an item (failure, drop-last remainder, stop) it
 * closes it if it is {@link java.lang.AutoCloseable} (or closes the elements of a collection). An
 * {@link dev.spindle.spark.pipeline.Op} owns its input.
 *
 * <p><b>Files.</b> API: {@code Pipeline}, {@code PipelineBuilder}, {@code PipelineIterator}, {@code
 * Op}, {@code Order}, {@code LastBatch}, {@code FailureBudget}, {@code QuarantineEntry}, {@code
 * PipelineFailure}, {@code StageStats}, {@code PipelineStats}, {@code LatencyBuckets}, {@code
 * StatsMerge} (job-wide merge of task statistics), {@code ExecutorPools} ({@code PipelineBench},
 * the {@code bin/spindle bench pipeline} entry point, is in loader-bench). Engine: {@code
 * RunningPipeline} (wiring, consumer side, close), {@code SourceTask}, {@code Stage} with {@code
 * PipeStage} and {@code AggregateStage}, {@code ItemQueue} (bounded queue), {@code RunState} (stop
 * flag, failures, quarantine), {@code FailureLog} (de-duplicated logging), {@code
 * StageMeter}/{@code LatencyHistogram}/{@code IntervalTimer} (statistics), {@code SparkTask} (task
 * completion and kill), {@code Items} (default sizes, release).
 */
package dev.spindle.spark.pipeline;
