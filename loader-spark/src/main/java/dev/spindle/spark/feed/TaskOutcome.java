package dev.spindle.spark.feed;

import dev.spindle.spark.metrics.QuarantineRecord;
import java.io.Serializable;
import java.util.List;

/**
 * What one feed task attempt reports back to the driver.
 *
 * @param batches every batch it produced, in production order
 * @param quarantined samples it could not use (planned index, shard, key, reason)
 * @param samplesRead encoded samples read from shards (repeats read once)
 * @param bytesIn encoded bytes read
 * @param firstBatchEpochMs wall-clock time its first batch reached the consumer, or 0
 */
record TaskOutcome(
    List<BatchRecord> batches,
    List<QuarantineRecord> quarantined,
    long samplesRead,
    long bytesIn,
    long firstBatchEpochMs)
    implements Serializable {}
