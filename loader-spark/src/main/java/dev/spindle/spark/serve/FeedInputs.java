package dev.spindle.spark.serve;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.plan.EpochPlan;
import java.io.Serializable;

/**
 * What every task of one epoch reads: the plan and the manifest it numbers. Broadcast once per
 * epoch, so each executor JVM receives it once, not once per task.
 */
public record FeedInputs(EpochPlan plan, Manifest manifest, long[] offsets)
    implements Serializable {
  public static FeedInputs of(EpochPlan plan, Manifest manifest) {
    return new FeedInputs(plan, manifest, manifest.offsets());
  }
}
