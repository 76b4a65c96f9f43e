package dev.spindle.spark.feed;

import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.plan.LoaderState;

/**
 * The end of a {@code feed} run.
 *
 * @param report the JSON report (per rank and epoch: rank, epoch, batches, samples, digest; the
 *     state; the quarantine list; throughput)
 * @param state the loader state after the run: where {@code --resume} continues
 */
public record FeedResult(JobReport report, LoaderState state) {}
