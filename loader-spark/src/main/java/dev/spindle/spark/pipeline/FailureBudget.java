package dev.spindle.spark.pipeline;

/**
 * How many item failures a stage tolerates before the pipeline stops.
 *
 * <p>Each stage counts its own failures and items against its budget. A count budget is exceeded
 * by the failure after the {@code maxFailures}-th; a fraction budget is checked only once the stage
 * has processed at least {@code minItems} items (successes plus failures), and is exceeded when
 * {@code failures > maxFraction * processed}. Immutable value; any thread.
 *
 * @param maxFailures failures tolerated (count budgets); {@code -1} for fraction budgets
 * @param maxFraction failure rate tolerated (fraction budgets); {@code -1} for count budgets
 * @param minItems items processed before a fraction budget is checked; 0 for count budgets
 */
public record FailureBudget(long maxFailures, double maxFraction, long minItems) {
  public FailureBudget {
    boolean isCount = maxFailures >= 0 && maxFraction == -1 && minItems == 0;
    boolean isFraction =
        maxFailures == -1 && maxFraction >= 0 && maxFraction <= 1 && minItems >= 1;
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

  /** At most {@code maxFraction} of processed items fail, checked after {@code minItems} items. */
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

  /** Whether {@code failures} out of {@code processed} items exceed this budget. */
  public boolean exceededBy(long failures, long processed) {
    if (maxFailures >= 0) {
      return failures > maxFailures;
    }
    return processed >= minItems && failures > maxFraction * processed;
  }

  /** A short description for error messages, e.g. "at most 10 failures". */
  public String describe() {
    return maxFailures >= 0
        ? "at most " + maxFailures + " failures"
        : "at most " + (maxFraction * 100) + "% failures after " + minItems + " items";
  }
}
