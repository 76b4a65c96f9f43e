package dev.spindle.spark.pipeline;

/** The order in which a stage emits its results. */
public enum Order {
  /** Results leave in the order their inputs arrived: deterministic output. */
  INPUT,
  /** Results leave as soon as they are done: faster when per-item cost is skewed. */
  COMPLETION
}
