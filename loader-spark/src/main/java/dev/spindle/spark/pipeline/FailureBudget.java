package dev.spindle.spark.pipeline;

import java.io.Serializable;

/**
 * How many failed items (quarantined samples) a run tolerates: a count, or a fraction of the items
 * seen. The one budget type of Spindle: {@code spark.spindle.maxFailures} parses into it on the
 * driver ({@link #parse}), each task's pipeline stages check it while they run, and the job judges
 * its whole run against it at the end. Immutable value; any thread.
 *
 * <p>Two rules, one for each moment:
 *
 * <ul>
 *   <li>while a stage runs ({@link #exceededSoFar}): a count budget is exceeded by the failure
 *       after the {@code maxFailures}-th; a fraction budget only once the stage has processed at
 *       least {@code minItems} items (successes plus failures), when {@code failures > maxFraction
 *       * processed};
 *   <li>at the end of a run ({@link #exceeded}): a count as above; a fraction is applied to at
 *       least {@code minItems} items, {@code failures > maxFraction * max(items, minItems)}, so a
 *       small job is not failed by its first bad sample nor passed when all of its samples are bad.
 * </ul>
 *
 * @param maxFailures failures tolerated (count budgets); {@code -1} for fraction budgets
 * @param maxFraction failure rate tolerated (fraction budgets); {@code -1} for count budgets
 * @param minItems items a fraction is judged over at least; 0 for count budgets
 */
public record FailureBudget(long maxFailures, double maxFraction, long minItems)
    implements Serializable {
  private static final String ALLOWED =
      "must be a count >= 0 such as 10, or a fraction in [0, 1) such as 0.01 or 1%";

  public FailureBudget {
    boolean isCount = maxFailures >= 0 && maxFraction == -1 && minItems == 0;
    boolean isFraction = maxFailures == -1 && maxFraction >= 0 && maxFraction <= 1 && minItems >= 1;
    if (!isCount && !isFraction) {
      throw new IllegalArgumentException(
          String.format(
              "Invalid failure budget: maxFailures=%d, maxFraction=%s, minItems=%d"
                  + " (use FailureBudget.count(n >= 0) or fraction(0 <= f <= 1, minItems >= 1))",
              maxFailures, maxFraction, minItems));
    }
  }

  /** No failure tolerated: the first failed item stops the pipeline (the default). */
  public static FailureBudget none() {
    return count(0);
  }

  /** At most {@code maxFailures} failed items; the next one stops the pipeline. */
  public static FailureBudget count(long maxFailures) {
    if (maxFailures < 0) {
      throw new IllegalArgumentException(
          "Invalid failure budget count: " + maxFailures + " (must be >= 0)");
    }
    return new FailureBudget(maxFailures, -1, 0);
  }

  /** At most {@code maxFraction} of the items fail, judged over at least {@code minItems}. */
  public static FailureBudget fraction(double maxFraction, long minItems) {
    if (!(maxFraction >= 0 && maxFraction <= 1)) {
      throw new IllegalArgumentException(
          "Invalid failure budget fraction: " + maxFraction + " (must be in [0, 1])");
    }
    if (minItems < 1) {
      throw new IllegalArgumentException(
          "Invalid failure budget minItems: " + minItems + " (must be >= 1)");
    }
    return new FailureBudget(-1, maxFraction, minItems);
  }

  /**
   * Parses a configured budget: {@code "10"} (a count), {@code "0.01"} or {@code "1%"} (a fraction,
   * judged over at least {@code minItems} items).
   *
   * @throws IllegalArgumentException saying what is allowed, for anything else
   */
  public static FailureBudget parse(String text, long minItems) {
    String t = text.trim();
    try {
      if (t.endsWith("%")) {
        return parsedFraction(Double.parseDouble(t.substring(0, t.length() - 1)) / 100.0, minItems);
      }
      if (t.contains(".")) {
        return parsedFraction(Double.parseDouble(t), minItems);
      }
      long count = Long.parseLong(t);
      if (count >= 0) {
        return count(count);
      }
    } catch (NumberFormatException e) {
      // the message below says what is allowed
    }
    throw new IllegalArgumentException(ALLOWED);
  }

  private static FailureBudget parsedFraction(double f, long minItems) {
    if (!(f >= 0 && f < 1)) {
      throw new IllegalArgumentException(ALLOWED);
    }
    return fraction(f, minItems);
  }

  /** While a stage runs: whether {@code failures} out of {@code processed} items exceed it. */
  public boolean exceededSoFar(long failures, long processed) {
    if (maxFailures >= 0) {
      return failures > maxFailures;
    }
    return processed >= minItems && failures > maxFraction * processed;
  }

  /** True when a count budget is already exceeded; fractions are only judged at the end. */
  public boolean exceededEarly(long failures) {
    return maxFailures >= 0 && failures > maxFailures;
  }

  /** At the end of a run: whether {@code failures} out of {@code items} exceed it. */
  public boolean exceeded(long failures, long items) {
    if (maxFailures >= 0) {
      return failures > maxFailures;
    }
    return failures > maxFraction * Math.max(items, minItems);
  }

  /** The rule of {@link #exceededSoFar} in words, e.g. "at most 10 failures". */
  public String describe() {
    return maxFailures >= 0
        ? "at most " + maxFailures + " failures"
        : "at most " + (maxFraction * 100) + "% failures after " + minItems + " items";
  }

  /** The rule of {@link #exceeded} in words, as a job reports it: "10 samples". */
  public String describeForSamples() {
    return maxFailures >= 0
        ? maxFailures + " samples"
        : String.format("%.4g of the samples (judged over at least %d)", maxFraction, minItems);
  }
}
