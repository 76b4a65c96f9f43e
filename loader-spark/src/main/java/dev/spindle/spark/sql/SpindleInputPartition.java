package dev.spindle.spark.sql;

import dev.spindle.spark.plan.ShardGroup;
import dev.spindle.spark.samples.ShardSamples;
import dev.spindle.spark.shard.SampleLimits;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;

/**
 * One task's share of a scan: consecutive whole shards up to {@code spark.spindle.partitionBytes}
 * (one larger shard alone), with the dataset index of each one's first sample. Immutable; planned
 * on the driver, shipped to an executor.
 */
record SpindleInputPartition(ShardGroup group) implements ScanPart {
  @Override
  public int partition() {
    return group.partition();
  }

  @Override
  public String describe() {
    return group.shards().size() == 1
        ? group.shards().get(0).displayName()
        : group.shards().size() + " shards from " + group.shards().get(0).displayName();
  }

  @Override
  public PartSamples open(Configuration conf, SampleLimits limits) {
    ShardSamples shards = new ShardSamples(group.shards(), group.offsets(), conf, limits);
    return new PartSamples() {
      @Override
      public boolean hasNext() {
        return shards.hasNext();
      }

      @Override
      public ShardSamples.Located next() {
        return shards.next();
      }

      @Override
      public long bytesRead() {
        return shards.bytesRead();
      }

      @Override
      public long samples() {
        return shards.samples();
      }

      @Override
      public void close() throws IOException {
        shards.close();
      }
    };
  }
}
