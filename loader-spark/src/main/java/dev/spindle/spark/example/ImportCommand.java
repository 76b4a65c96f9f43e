package dev.spindle.spark.example;

import dev.spindle.spark.job.Sessions;
import dev.spindle.spark.metrics.JobReport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.SparkSession;

/**
 * {@code import-fashion-mnist --output URI [--limit N] [--shards S] [--split train|t10k]
 * [--source DIR] [--report FILE] [--master URL]}: runs {@link FashionMnistImport} on a session of
 * its own. Main thread.
 */
public final class ImportCommand {
  private static final Set<String> FLAGS = Set.of("--output", "--limit", "--shards", "--split",
      "--source", "--report", "--master");

  private ImportCommand() {}

  public static JobReport run(String[] argv) throws IOException {
    Map<String, String> f = new LinkedHashMap<>();
    for (int i = 0; i < argv.length; i++) {
      if (!FLAGS.contains(argv[i]) || i + 1 >= argv.length) {
        throw new IllegalArgumentException("Invalid flag for 'import-fashion-mnist': " + argv[i]
            + (FLAGS.contains(argv[i]) ? " needs a value" : "; accepted: "
            + String.join(" ", new TreeSet<>(FLAGS))));
      }
      f.put(argv[i], argv[++i]);
    }
    if (!f.containsKey("--output")) {
      throw new IllegalArgumentException("'import-fashion-mnist' needs --output");
    }
    String split = f.getOrDefault("--split", "train");
    if (!split.equals("train") && !split.equals("t10k")) {
      throw new IllegalArgumentException("Invalid --split: '" + split + "' (must be train or t10k)");
    }
    SparkSession spark = Sessions.start("import-fashion-mnist", f.get("--master"), Map.of());
    try {
      JobReport report = FashionMnistImport.run(spark,
          Path.of(f.getOrDefault("--source", FashionMnistImport.DEBIAN_DIR.toString())), split,
          f.get("--output"), integer(f, "--limit", 0), integer(f, "--shards", 8));
      if (f.containsKey("--report")) {
        report.write(Path.of(f.get("--report")));
      }
      return report;
    } finally {
      spark.stop();
    }
  }

  private static int integer(Map<String, String> f, String flag, int dflt) {
    try {
      return f.containsKey(flag) ? Integer.parseInt(f.get(flag)) : dflt;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("Invalid " + flag + ": '" + f.get(flag)
          + "' (must be an integer)");
    }
  }
}
