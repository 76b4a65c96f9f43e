package dev.spindle.spark.cli;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** The steps every Spark command shares: its session, and the line it prints at its end. */
final class Jobs {
  private Jobs() {}

  /**
   * The session {@code command} runs on and owns (the command stops it).
   *
   * @throws ParameterException when the master cannot run here, saying what it needs
   */
  static SparkSession session(CommandLine cl, String command, SparkOptions spark,
      Map<String, String> settings) {
    return session(cl, command, spark.master, settings);
  }

  static SparkSession session(CommandLine cl, String command, String master,
      Map<String, String> settings) {
    try {
      return Sessions.start(command, master, settings);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, e.getMessage());
    }
  }

  /** Prints the one-line summary of a report's fields. */
  static void summary(CommandLine cl, Map<String, Object> fields) {
    cl.getOut().println(Summary.line(fields));
  }

  /** The same, saying where the quarantined samples are listed and ending with {@code notes}. */
  static void summary(CommandLine cl, Map<String, Object> fields, ReportOption report,
      List<String> notes) {
    cl.getOut().println(Summary.line(fields, report.file, notes));
  }
}
