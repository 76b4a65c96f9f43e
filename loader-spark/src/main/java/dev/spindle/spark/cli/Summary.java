package dev.spindle.spark.cli;

import java.util.Map;

/** The one line a command prints when it ends, from its report's fields. */
final class Summary {
  private Summary() {}

  static String line(Map<String, Object> r) {
    StringBuilder s = new StringBuilder();
    s.append(r.get("command")).append(": ");
    s.append(r.get("images")).append(" images");
    if (r.get("failures") != null) {
      s.append(" (").append(r.get("failures")).append(" quarantined)");
    }
    s.append(String.format(" in %.2f s, %.1f images/s", num(r.get("wall_s")),
        num(r.get("images_per_s"))));
    if (r.get("time_to_first_batch_s") != null) {
      s.append(String.format(", first batch after %.2f s", num(r.get("time_to_first_batch_s"))));
    }
    if (r.get("test_accuracy") != null) {
      s.append(String.format(", test accuracy %.4f on %s images", num(r.get("test_accuracy")),
          r.get("test_samples")));
    }
    if (r.get("output") != null) {
      s.append(" -> ").append(r.get("output"));
    }
    return s.toString();
  }

  private static double num(Object o) {
    return o instanceof Number n ? n.doubleValue() : Double.NaN;
  }
}
