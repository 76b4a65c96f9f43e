package dev.spindle.spark.sql;

import dev.spindle.spark.shard.SampleLimits;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.connector.read.InputPartition;

/** A partition of a {@code spindle} scan: what its reader reads, and how to name it. */
interface ScanPart extends InputPartition {
  /** The partition's number in its scan, from 0. */
  int partition();

  /** The partition for messages: its shards, or its stretch of a mixture's plan. */
  String describe();

  /** Its samples, for one reader; the reader's path closes them. */
  PartSamples open(Configuration conf, SampleLimits limits);
}
