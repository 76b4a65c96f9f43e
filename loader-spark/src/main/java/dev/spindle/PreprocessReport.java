package dev.spindle;

import dev.spindle.spark.metrics.JobReport;

/**
 * The report of a {@code preprocess} job (see {@link Report}); its JSON fields are listed in the
 * README. A snapshot the caller owns.
 */
public final class PreprocessReport extends Report {
  PreprocessReport(JobReport report) {
    super(report);
  }

  /** The committed output, as a qualified URI. */
  public String output() {
    return String.valueOf(fields().get("output"));
  }
}
