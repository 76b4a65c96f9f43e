package dev.spindle.spark.cli;

import dev.spindle.spark.metrics.ReportPage;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code report}: a job's JSON report as one self-contained HTML page. Main thread. */
@Command(
    name = "report",
    header = "Render a job's JSON report as one HTML page.",
    mixinStandardHelpOptions = true,
    description = {
      "Renders any Spindle report (preprocess, feed, train, bench --report FILE) as"
          + " one self-contained HTML page: summary, throughput over time, stage latency"
          + " (p50/p90/p99) and queue occupancy, the bottleneck, the quarantine table and feeder"
          + " charts. Chart.js is inlined: the page opens offline, from any folder."
    })
final class ReportCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "REPORT.json", description = "A report written by --report")
  Path report;

  @Option(
      names = "--html",
      paramLabel = "OUT.html",
      description = "Where to write the page (default: beside the report, with .html)")
  Path html;

  @Override
  public Integer call() throws Exception {
    if (!Files.isRegularFile(report)) {
      throw new NoSuchFileException(report.toString(), null, "no such report file");
    }
    Path out = html != null ? html : defaultPage(report);
    ReportPage.write(report, out);
    spec.commandLine().getOut().println("report: wrote " + out);
    spec.commandLine().getOut().flush();
    return 0;
  }

  /** {@code r.json} → {@code r.html}; any other name gains {@code .html}. */
  static Path defaultPage(Path report) {
    String name = report.getFileName().toString();
    String stem = name.endsWith(".json") ? name.substring(0, name.length() - 5) : name;
    return report.resolveSibling(stem + ".html");
  }
}
