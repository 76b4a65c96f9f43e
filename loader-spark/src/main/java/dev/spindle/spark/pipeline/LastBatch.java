package dev.spindle.spark.pipeline;

/**
 * What {@code aggregate} does with a last, incomplete batch of its input. Not the plan's {@code
 * dev.spindle.spark.plan.Remainder}, which decides how a dataset that does not divide into equal
 * batches per rank is made to (drop, pad, exact); this one only ends a stream.
 */
public enum LastBatch {
  /** Drop it (every batch has exactly the requested size); its items are released. */
  DROP,
  /** Emit it as a shorter last batch. */
  KEEP
}
