package dev.spindle.spark.config;

import java.io.Serializable;

/**
 * How many quarantined samples a job tolerates: a count ({@code "10"}) or a fraction of the
 * samples seen ({@code "0.01"} or {@code "1%"}). A fraction is applied to at least {@code
 * minSamples} samples, so a small job is not failed by its first bad sample nor passed when all of
 * its samples are bad.
 */
public record FailureBudget(long maxCount, double maxFraction, long minSamples)
    implements Serializable {
  private static final String ALLOWED =
      "must be a count >= 0 such as 10, or a fraction in [0, 1) such as 0.01 or 1%";

  /**
   * Parses {@code "10"}, {@code "0.01"} or {@code "1%"}.
   *
   * @throws IllegalArgumentException saying what is allowed, for anything else
   */
  public static FailureBudget parse(String text, long minSamples) {
    String t = text.trim();
    try {
      if (t.endsWith("%")) {
        return fraction(Double.parseDouble(t.substring(0, t.length() - 1)) / 100.0, minSamples);
      }
      if (t.contains(".")) {
        return fraction(Double.parseDouble(t), minSamples);
      }
      long count = Long.parseLong(t);
      if (count >= 0) {
        return new FailureBudget(count, -1, minSamples);
      }
    } catch (NumberFormatException e) {
      // the message below says what is allowed
    }
    throw new IllegalArgumentException(ALLOWED);
  }

  private static FailureBudget fraction(double f, long minSamples) {
    if (!(f >= 0 && f < 1)) {
      throw new IllegalArgumentException(ALLOWED);
    }
    return new FailureBudget(-1, f, minSamples);
  }

  /** True when a count budget is already exceeded; fractions are only judged at the end. */
  public boolean exceededEarly(long failures) {
    return maxCount >= 0 && failures > maxCount;
  }

  /** True when {@code failures} out of {@code samples} is over the budget. */
  public boolean exceeded(long failures, long samples) {
    if (maxCount >= 0) {
      return failures > maxCount;
    }
    return failures > maxFraction * Math.max(samples, minSamples);
  }

  /**
   * The same budget for one task's pipeline stage: a count as it is; a fraction judged once the
   * stage has seen {@code minSamples} items. The job judges the whole run again at its end.
   */
  public dev.spindle.spark.pipeline.FailureBudget toPipelineBudget() {
    return maxCount >= 0
        ? dev.spindle.spark.pipeline.FailureBudget.count(maxCount)
        : dev.spindle.spark.pipeline.FailureBudget.fraction(maxFraction, minSamples);
  }

  /** How the budget reads in messages. */
  public String describe() {
    return maxCount >= 0
        ? maxCount + " samples"
        : String.format("%.4g of the samples (judged over at least %d)", maxFraction, minSamples);
  }
}
