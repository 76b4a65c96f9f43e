package dev.spindle.spark.sql;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.Mixture;
import dev.spindle.spark.shard.SampleLimits;
import java.util.function.LongFunction;
import org.apache.hadoop.conf.Configuration;

/**
 * One task's share of a mixture's scan: positions {@code [from, to)} of the mixture's epoch plan
 * for one rank (world size 1, batches of one sample: the whole epoch in plan order, nothing dropped
 * nor padded), over {@code catalog}, the sources' manifests laid end to end. Partition {@code p}
 * holds the stretch after partition {@code p - 1}'s, so the partitions in order are the epoch's
 * order. Immutable; planned on the driver, shipped to an executor (with the plan and the catalog).
 */
record MixInputPartition(EpochPlan plan, Manifest catalog, int partition, int from, int to)
    implements ScanPart {
  @Override
  public String describe() {
    return "positions " + from + ".." + (to - 1) + " of the mixture's epoch " + plan.epoch();
  }

  /** The name of the source of the catalog's sample {@code index} (the {@code source} column). */
  LongFunction<String> sourceNames() {
    long[] offsets = catalog.offsets();
    Mixture mixture = plan.mixture();
    return index -> mixture.names().get(mixture.sourceOf(offsets, index));
  }

  @Override
  public PartSamples open(Configuration conf, SampleLimits limits) {
    return new MixedSamples(this, conf, limits);
  }
}
