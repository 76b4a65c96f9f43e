package dev.spindle.spark.metrics;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Renders any job report (preprocess, feed, train, bench…) as one self-contained HTML page: a
 * summary table, throughput over time, the trainers of a {@code train} run (per rank: how it ended,
 * steps, mean step time, wait, restarts and failures), stage latency and queue occupancy, the
 * bottleneck, the quarantine table and feeder charts, each shown when the report has the data.
 * Chart.js and the page's script are inlined, so the page needs no network and no other file.
 * Stateless; any thread.
 */
public final class ReportPage {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper PRETTY =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final Pattern SLOT = Pattern.compile("\\{\\{([a-z_]+)}}");

  private ReportPage() {}

  /** Reads the report {@code json} and writes its page to {@code html}; folders are created. */
  public static void write(Path json, Path html) throws IOException {
    Map<String, Object> report;
    try {
      report = JobReport.read(json);
    } catch (IOException e) {
      throw new IOException("Cannot read the report " + json + ": " + e.getMessage(), e);
    }
    Path parent = html.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(html, render(report, json.getFileName().toString()));
  }

  /** The page for {@code report}; {@code name} titles it (e.g. the report's file name). */
  public static String render(Map<String, Object> report, String name) throws IOException {
    Object command = report.getOrDefault("command", report.getOrDefault("benchmark", "report"));
    Map<String, String> slots =
        Map.of(
            "title", Html.text("Spindle " + command + " — " + name),
            "bottleneck", bottleneck(report),
            "summary", ReportTables.summary(report),
            "quarantine", ReportTables.quarantine(report),
            "full", Html.text(PRETTY.writeValueAsString(report)),
            "data", Html.scriptJson(JSON.writeValueAsString(report)),
            "chartjs", resource("chart.umd.js"),
            "script", resource("report.js"));
    Matcher m = SLOT.matcher(resource("page.html"));
    StringBuilder out = new StringBuilder(600_000);
    while (m.find()) {
      String value = slots.get(m.group(1));
      if (value == null) {
        throw new IllegalStateException("page.html names an unknown slot: " + m.group());
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    return m.appendTail(out).toString();
  }

  private static String bottleneck(Map<String, Object> report) {
    Object b = report.get("bottleneck");
    return b == null || b.toString().isEmpty()
        ? ""
        : "<p class=\"bottleneck\">Bottleneck stage: <strong>" + Html.text(b) + "</strong></p>";
  }

  private static String resource(String name) {
    try (InputStream in = ReportPage.class.getResourceAsStream("report/" + name)) {
      if (in == null) {
        throw new IllegalStateException(
            "Missing resource dev/spindle/spark/metrics/report/" + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
