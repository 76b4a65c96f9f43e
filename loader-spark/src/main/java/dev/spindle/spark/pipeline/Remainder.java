package dev.spindle.spark.pipeline;

/** What {@code aggregate} does with a last, incomplete batch. */
public enum Remainder {
  /** Drop it (every batch has exactly the requested size); its items are released. */
  DROP,
  /** Emit it as a shorter last batch. */
  KEEP
}
