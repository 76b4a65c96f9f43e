package dev.spindle.spark.config;

/**
 * Renders the documentation of every key from {@link SpindleConfig}: the {@code
 * conf/spark-defaults.conf.example} file and the key table of {@code docs/reference/config.md}. A
 * test fails when either file drifts from what this renders; {@code bin/spindle config
 * --example|--markdown} prints them and {@code bin/gen-docs} writes them.
 */
public final class ConfigDocs {
  private ConfigDocs() {}

  /** The body of {@code conf/spark-defaults.conf.example}. */
  public static String sparkDefaultsExample() {
    StringBuilder s = new StringBuilder();
    s.append(
        "# Spindle settings with their defaults. Copy to spark-defaults.conf (or pass --conf\n");
    s.append(
        "# key=value, or set them on the SparkSession builder) and uncomment what you change.\n");
    s.append(
        "# Generated from dev.spindle.spark.config.SpindleConfig: bin/spindle config --example\n");
    for (ConfigKey<?> k : SpindleConfig.keys()) {
      s.append("\n# ").append(k.doc()).append('\n');
      s.append("# ").append(k.key()).append(' ').append(k.defaultValue()).append('\n');
    }
    return s.toString();
  }

  /** The key table of {@code docs/reference/config.md} (Markdown). */
  public static String markdownTable() {
    StringBuilder s = new StringBuilder();
    s.append("| key | default | what it does |\n|---|---|---|\n");
    for (ConfigKey<?> k : SpindleConfig.keys()) {
      s.append("| `")
          .append(k.key())
          .append("` | `")
          .append(k.defaultValue())
          .append("` | ")
          .append(k.doc().replace("|", "\\|"))
          .append(" |\n");
    }
    return s.toString();
  }
}
