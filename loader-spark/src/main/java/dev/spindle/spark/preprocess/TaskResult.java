package dev.spindle.spark.preprocess;

import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.pipeline.PipelineStats;
import dev.spindle.spark.sink.CommittedFile;
import java.io.Serializable;
import java.util.List;

/**
 * What one preprocess task attempt reports back to the driver.
 *
 * @param file the file it wrote under the job's temporary folder
 * @param samples samples it read (delivered + quarantined)
 * @param quarantined how many it quarantined
 * @param quarantinedSamples every one of them (bounded by the task's share of the failure budget)
 * @param bytesIn encoded bytes read
 * @param firstBatchEpochMs wall-clock time its first batch was written, or 0
 * @param stats its pipeline's statistics at the end
 * @param budgetExceeded true when it stopped early because its failure budget was exceeded
 */
record TaskResult(
    CommittedFile file,
    long samples,
    long quarantined,
    List<QuarantineRecord> quarantinedSamples,
    long bytesIn,
    long firstBatchEpochMs,
    PipelineStats stats,
    boolean budgetExceeded)
    implements Serializable {}
