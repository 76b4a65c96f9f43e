package dev.spindle.spark.plan;

import java.io.Serializable;
import java.util.Objects;

/**
 * Everything besides the manifest that an epoch plan depends on. Immutable and checked on
 * construction, so a plan is refused before any work starts.
 *
 * @param seed any 64-bit value; the same seed gives the same plans on every JVM
 * @param epoch the epoch number, {@code >= 0}; each epoch has its own shard order and windows
 * @param worldSize the number of trainer ranks, {@code >= 1}
 * @param batchSize samples per batch, {@code >= 1}
 * @param remainder what happens to samples that do not fill a last round of batches
 * @param shuffleWindow samples per shuffle window, {@code >= 1}; 1 keeps each shard's own order
 * @param budget null for batches of {@code batchSize} samples; else batches packed up to a token
 *     budget, {@code batchSize} being the most rows one may hold (package documentation, "Token
 *     budgets")
 */
public record PlanSpec(
    long seed,
    int epoch,
    int worldSize,
    int batchSize,
    Remainder remainder,
    int shuffleWindow,
    TokenBudget budget)
    implements Serializable {

  /** The default shuffle window: about 16 ImageNet-sized tar shards of 1,000 samples. */
  public static final int DEFAULT_SHUFFLE_WINDOW = 16_384;

  public PlanSpec {
    Objects.requireNonNull(remainder, "remainder");
    requireAtLeast("epoch", epoch, 0);
    requireAtLeast("world size", worldSize, 1);
    requireAtLeast("batch size", batchSize, 1);
    requireAtLeast("shuffle window", shuffleWindow, 1);
  }

  /** A spec of batches of {@code batchSize} samples (no token budget). */
  public PlanSpec(
      long seed, int epoch, int worldSize, int batchSize, Remainder remainder, int shuffleWindow) {
    this(seed, epoch, worldSize, batchSize, remainder, shuffleWindow, null);
  }

  /** A spec with the default shuffle window. */
  public static PlanSpec of(
      long seed, int epoch, int worldSize, int batchSize, Remainder remainder) {
    return new PlanSpec(seed, epoch, worldSize, batchSize, remainder, DEFAULT_SHUFFLE_WINDOW);
  }

  /** The same spec for another epoch. */
  public PlanSpec withEpoch(int newEpoch) {
    return new PlanSpec(seed, newEpoch, worldSize, batchSize, remainder, shuffleWindow, budget);
  }

  /** The same spec for another world size. */
  public PlanSpec withWorldSize(int newWorldSize) {
    return new PlanSpec(seed, epoch, newWorldSize, batchSize, remainder, shuffleWindow, budget);
  }

  /** The same spec packing batches up to {@code tokens} (null: fixed-size batches). */
  public PlanSpec withBudget(TokenBudget tokens) {
    return new PlanSpec(seed, epoch, worldSize, batchSize, remainder, shuffleWindow, tokens);
  }

  /**
   * The spec a split of packed batches uses: each unit it splits is a whole batch ({@code
   * batchSize} 1), the rest as this spec.
   */
  PlanSpec unitSpec() {
    return new PlanSpec(seed, epoch, worldSize, 1, remainder, shuffleWindow, budget);
  }

  /**
   * The batches every rank gets in a fresh epoch of {@code samples} samples under this spec ({@link
   * EpochPlan#batchesPerRank} of {@link EpochPlan#create}): {@code samples / (worldSize ×
   * batchSize)} rounded down, or up under {@code PAD}. It does not refuse: {@link EpochPlan#create}
   * refuses a plan where this is 0, or that {@code EXACT} cannot split evenly.
   */
  public int freshBatchesPerRank(long samples) {
    long round = (long) worldSize * batchSize;
    return Math.toIntExact(
        remainder == Remainder.PAD ? (samples + round - 1) / round : samples / round);
  }

  /**
   * Parses a count given as text (a CLI flag or a configuration value), naming it on failure:
   * {@code parseCount("world size", "four")} throws "Invalid world size: "four" (must be a whole
   * number >= 1)".
   */
  public static int parseCount(String what, String text) {
    String trimmed = text == null ? "" : text.trim();
    int value;
    try {
      value = Integer.parseInt(trimmed);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "Invalid " + what + ": \"" + text + "\" (must be a whole number >= 1)", e);
    }
    requireAtLeast(what, value, 1);
    return value;
  }

  private static void requireAtLeast(String what, long value, long min) {
    if (value < min) {
      throw new IllegalArgumentException(
          "Invalid " + what + ": " + value + " (must be >= " + min + ")");
    }
  }
}
