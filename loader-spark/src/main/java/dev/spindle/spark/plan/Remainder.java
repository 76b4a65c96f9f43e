package dev.spindle.spark.plan;

/**
 * What a plan does with the samples that do not fill a last round of {@code worldSize × batchSize}.
 * Every policy gives every rank the same number of full batches.
 */
public enum Remainder {
  /** Drop the last {@code samples mod (worldSize × batchSize)} samples of the shuffled epoch. */
  DROP_LAST,
  /**
   * Add one more round of batches; ranks whose real samples do not fill it repeat their own first
   * samples, and every repeated entry is marked padded.
   */
  PAD,
  /** Neither: refuse a plan unless the samples divide evenly into ranks and batches. */
  EXACT
}
