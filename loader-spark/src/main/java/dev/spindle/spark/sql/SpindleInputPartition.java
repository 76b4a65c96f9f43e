package dev.spindle.spark.sql;

import dev.spindle.spark.plan.ShardGroup;
import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One task's share of a scan: consecutive whole shards up to {@code spark.spindle.partitionBytes}
 * (one larger shard alone), with the dataset index of each one's first sample. Immutable; planned
 * on the driver, shipped to an executor.
 */
record SpindleInputPartition(ShardGroup group) implements InputPartition {}
