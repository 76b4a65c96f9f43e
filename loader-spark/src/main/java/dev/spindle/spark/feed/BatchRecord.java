package dev.spindle.spark.feed;

import dev.spindle.spark.plan.BatchKey;
import java.io.Serializable;

/**
 * What a task reports to the driver about one batch it produced: its identity, the {@code index}
 * column as the consumer received it, and how many rows were padding or stand-ins.
 *
 * @param key the batch's deterministic identity
 * @param indices the batch's {@code index} column, in row order
 * @param padded padded rows (the last ones)
 * @param substituted rows standing in for quarantined samples
 * @param delivered false when this JVM's consumer already had the batch (a retried or
 *     speculative attempt) and it was not handed over again
 */
record BatchRecord(BatchKey key, long[] indices, int padded, int substituted, boolean delivered)
    implements Serializable {}
