package dev.spindle.spark.metrics;

import java.util.List;
import java.util.Map;

/**
 * The tables of a report's HTML page: a summary of its plain fields (nested objects flattened one
 * level, {@code manifest.samples}) and the quarantined samples. Every value is escaped.
 */
final class ReportTables {
  private ReportTables() {}

  static String summary(Map<String, Object> report) {
    StringBuilder rows = new StringBuilder();
    report.forEach((k, v) -> summaryRow(rows, k, v, true));
    return "<table class=\"summary\"><tbody>\n" + rows + "</tbody></table>";
  }

  private static void summaryRow(StringBuilder rows, String key, Object v, boolean top) {
    if (v instanceof Map<?, ?> m) {
      if (top) {
        m.forEach((k, inner) -> summaryRow(rows, key + "." + k, inner, false));
      }
      return;
    }
    if (v instanceof List<?> l && !(l.isEmpty() || l.stream().allMatch(ReportTables::plain))) {
      if (top && !key.equals("timeline") && !key.equals("quarantine")) {
        rows.append(row(key, l.size() + " entries (see the full report below)"));
      }
      return;
    }
    rows.append(row(key, v instanceof Double d ? format(d) : String.valueOf(v)));
  }

  private static boolean plain(Object o) {
    return !(o instanceof Map || o instanceof List);
  }

  private static String format(double d) {
    return Math.abs(d) >= 100 || d == Math.rint(d)
        ? String.format("%.1f", d)
        : String.format("%.4g", d);
  }

  private static String row(String key, String value) {
    return "<tr><th>" + Html.text(key) + "</th><td>" + Html.text(value) + "</td></tr>\n";
  }

  /** The quarantine table, or a sentence saying there is none. */
  static String quarantine(Map<String, Object> report) {
    if (!(report.get("quarantine") instanceof List<?> list) || list.isEmpty()) {
      return "<p>No samples were quarantined"
          + (report.containsKey("quarantine") ? "." : " (or the report does not list them).")
          + "</p>";
    }
    StringBuilder t =
        new StringBuilder(
            "<table class=\"quarantine\"><thead><tr><th>shard</th>"
                + "<th>key</th><th>index</th><th>reason</th></tr></thead><tbody>\n");
    for (Object o : list) {
      Map<?, ?> q = o instanceof Map<?, ?> m ? m : Map.of("reason", String.valueOf(o));
      t.append("<tr>");
      for (String col : List.of("shard", "key", "index", "reason")) {
        t.append("<td>").append(Html.text(q.get(col))).append("</td>");
      }
      t.append("</tr>\n");
    }
    t.append("</tbody></table>");
    Object total = report.get("quarantine_total");
    if (Boolean.TRUE.equals(report.get("quarantine_truncated"))) {
      t.append("<p>The first ")
          .append(list.size())
          .append(" of ")
          .append(Html.text(total))
          .append(" are listed; all of them are in <code>")
          .append(Html.text(report.get("quarantine_file")))
          .append("</code>.</p>");
    }
    return t.toString();
  }
}
