package dev.spindle.spark.sql;

import dev.spindle.spark.samples.ShardSamples;
import java.io.IOException;
import java.util.Iterator;

/**
 * One scan partition's samples in the order its rows are returned, each with its index: the sample
 * path's source in a {@link SpindlePartitionReader}. Whole shards in manifest order ({@link
 * SpindleInputPartition}), or a stretch of a mixture's epoch plan ({@link MixInputPartition}).
 * Pulled by the path's reading thread, which closes it; the counters may be read by any thread.
 */
interface PartSamples extends Iterator<ShardSamples.Located>, AutoCloseable {
  /** Encoded bytes read so far. */
  long bytesRead();

  /** Samples handed out so far: delivered or quarantined. */
  long samples();

  /** Closes what is open; safe to call twice. */
  @Override
  void close() throws IOException;
}
