package dev.spindle.spark.cli;

import dev.spindle.spark.metrics.JobReport;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The one line a command prints when it ends, from its report's fields. */
final class Summary {
  private Summary() {}

  static String line(Map<String, Object> r) {
    return line(r, null, List.of());
  }

  /**
   * The line, saying where quarantined samples are listed ({@code report}, the {@code --report}
   * file, or null) and ending with {@code notes} (what a stop or a resume did), {@code ; }-joined.
   */
  static String line(Map<String, Object> r, Path report, List<String> notes) {
    StringBuilder s = new StringBuilder();
    s.append(r.get("command")).append(": ");
    String unit = images(r) ? "images" : "samples";
    s.append(r.get("images")).append(" ").append(unit);
    if (r.get("failures") != null) {
      s.append(" (")
          .append(r.get("failures"))
          .append(" quarantined")
          .append(quarantineNote(num(r.get("failures")), report))
          .append(")");
    }
    if (num(r.get("input_skipped_total")) > 0) {
      s.append(", ")
          .append(r.get("input_skipped_total"))
          .append(" input files not read")
          .append(skippedNote(report));
    }
    s.append(
        String.format(
            " in %.2f s, %.1f %s/s", num(r.get("wall_s")), num(r.get("images_per_s")), unit));
    if (r.get("time_to_first_batch_s") != null) {
      s.append(String.format(", first batch after %.2f s", num(r.get("time_to_first_batch_s"))));
    }
    if (r.get("test_accuracy") != null) {
      s.append(
          String.format(
              ", test accuracy %.4f on %s images",
              num(r.get("test_accuracy")), r.get("test_samples")));
    }
    if (r.get("mix") instanceof Map<?, ?> mix && mix.get("sources") instanceof List<?> sources) {
      s.append(", mixed");
      for (Object o : sources) {
        Map<?, ?> src = (Map<?, ?>) o;
        s.append(
            String.format(
                " %s %.1f%% (asked %.1f%%)",
                src.get("name"), 100 * num(src.get("realised")), 100 * num(src.get("proportion"))));
      }
    }
    if (r.get("output") != null) {
      s.append(" -> ").append(r.get("output"));
    }
    notes.forEach(n -> s.append("; ").append(n));
    return s.toString();
  }

  /**
   * Whether the job's samples have images: a report of samples without one says {@code image_shape}
   * null (its {@code images} and {@code images_per_s} keys, contracts, count samples).
   */
  private static boolean images(Map<String, Object> r) {
    return !(r.containsKey("image_shape") && r.get("image_shape") == null);
  }

  private static String quarantineNote(double count, Path report) {
    if (!(count > 0)) {
      return "";
    }
    return report == null
        ? ", listed with --report FILE"
        : ", listed in " + report + " (key \"quarantine\") and " + JobReport.quarantineFile(report);
  }

  /** Where the input's files that were not read are listed ({@code input_skipped}). */
  private static String skippedNote(Path report) {
    return report == null
        ? " (listed with --report FILE)"
        : " (listed in " + report + ", key \"input_skipped\")";
  }

  private static double num(Object o) {
    return o instanceof Number n ? n.doubleValue() : Double.NaN;
  }
}
