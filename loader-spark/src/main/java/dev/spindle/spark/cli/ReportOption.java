package dev.spindle.spark.cli;

import dev.spindle.Report;
import dev.spindle.spark.metrics.JobReport;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * {@code --report FILE}: where a command writes its JSON report, also when it fails ({@link
 * #writeFailure}).
 */
final class ReportOption {
  @Option(
      names = "--report",
      paramLabel = "FILE",
      description =
          "Write the JSON report to FILE (also when the job fails: \"status\" and \"error\")")
  Path file;

  /** The {@code --report} of the command {@code cl} runs, or null when it takes none. */
  static ReportOption of(CommandLine cl) {
    for (CommandSpec mixin : cl.getCommandSpec().mixins().values()) {
      if (mixin.userObject() instanceof ReportOption r) {
        return r;
      }
    }
    return null;
  }

  /**
   * Writes the report of a job that did not finish, when {@code --report} was given: {@code
   * command}, {@code status} ({@code failed} or {@code interrupted}), {@code error} (what the
   * command printed) and {@code exit_code}.
   */
  void writeFailure(String command, String status, String error, int exitCode) throws IOException {
    if (file != null) {
      new JobReport(command)
          .put("status", status)
          .put("error", error)
          .put("exit_code", exitCode)
          .write(file);
    }
  }

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
