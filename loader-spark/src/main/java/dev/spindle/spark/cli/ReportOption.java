package dev.spindle.spark.cli;

import dev.spindle.Report;
import dev.spindle.spark.metrics.JobReport;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --report FILE}: where a command writes its JSON report. */
final class ReportOption {
  @Option(names = "--report", paramLabel = "FILE", description = "Write the JSON report to FILE")
  Path file;

  void write(Report report) throws IOException {
    if (file != null) {
      report.writeTo(file);
    }
  }

  void write(JobReport report) throws IOException {
    if (file != null) {
      report.write(file);
    }
  }
}
