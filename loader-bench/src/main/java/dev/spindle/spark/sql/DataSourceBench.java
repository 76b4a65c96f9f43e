package dev.spindle.spark.sql;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.preprocess.PreprocessJob;
import dev.spindle.spark.progress.JobLabel;
import dev.spindle.spark.progress.ProgressPrinter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.hadoop.fs.FileUtil;
import org.apache.spark.sql.Observation;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * {@code bin/spindle bench datasource --input URI [--threads N] [--size 224] [--batch-size 256]
 * [--rounds 3] [--report FILE]}: the {@code spindle} data source's images/s against {@code
 * preprocess}'s on the same input, transforms and threads, in one JVM on embedded Spark ({@code
 * local[N]}, {@code spark.spindle.threads=N}). Each round runs both, alternating which goes first:
 * {@code preprocess} writes its Arrow files to a temporary folder; the data source's every row and
 * column goes to Spark's {@code noop} sink. Both count the input's tar shards again each round (the
 * data source's manifest cache is a temporary file, removed before each run). Prints and writes a
 * JSON report: per round and as medians, {@code preprocess_images_per_s}, {@code
 * datasource_images_per_s} and their {@code ratio} (the target is 0.9 or more). A benchmark: it
 * reports, it asserts nothing. Driver thread.
 */
public final class DataSourceBench {
  private DataSourceBench() {}

  /**
   * What to measure: the input, threads, image size, batch size, rounds, report file or null, and
   * how to show progress on the bench's session (null: not at all) and the settings that needs on
   * the session (the command line's, e.g. the executors' heartbeat interval).
   */
  public record Options(
      String input,
      int threads,
      int size,
      int batchSize,
      int rounds,
      Path report,
      Function<SparkSession, ProgressPrinter> progress,
      Map<String, String> progressConf) {}

  /** Runs the rounds on an embedded Spark of its own, prints and writes the report. */
  public static void run(Options o) throws IOException, InterruptedException {
    Map<String, String> conf =
        Map.of(
            "spark.spindle.threads", Integer.toString(o.threads()),
            "spark.spindle.image.size", Integer.toString(o.size()),
            "spark.spindle.batchSize", Integer.toString(o.batchSize()));
    Path work = Files.createTempDirectory("spindle-bench-datasource");
    SparkSession spark = session(o.threads(), conf, o.progressConf());
    try {
      Map<String, Object> report;
      try (ProgressPrinter shown = o.progress() != null ? o.progress().apply(spark) : null) {
        report = run(spark, o.input(), conf, o.rounds(), work);
      }
      report.put("threads", o.threads());
      String json =
          new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report);
      System.out.println(json);
      if (o.report() != null) {
        Files.writeString(o.report(), json + "\n");
      }
    } finally {
      spark.stop();
      FileUtil.fullyDelete(work.toFile());
    }
  }

  private static Map<String, Object> run(
      SparkSession spark, String input, Map<String, String> conf, int rounds, Path work)
      throws IOException, InterruptedException {
    List<Map<String, Object>> results = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Map<String, Object> round = new LinkedHashMap<>();
      if (r % 2 == 0) {
        preprocess(spark, input, conf, work, round);
        datasource(spark, input, work, round);
      } else {
        datasource(spark, input, work, round);
        preprocess(spark, input, conf, work, round);
      }
      round.put(
          "ratio",
          (double) round.get("datasource_images_per_s")
              / (double) round.get("preprocess_images_per_s"));
      System.err.println("bench datasource: round " + r + ": " + round);
      results.add(round);
    }
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("benchmark", "datasource");
    report.put("input", input);
    report.put("settings", conf);
    report.put("preprocess_images_per_s", median(results, "preprocess_images_per_s"));
    report.put("datasource_images_per_s", median(results, "datasource_images_per_s"));
    report.put("ratio", median(results, "ratio"));
    report.put("target_ratio", 0.9);
    report.put("rounds", results);
    return report;
  }

  private static void preprocess(
      SparkSession spark,
      String input,
      Map<String, String> conf,
      Path work,
      Map<String, Object> round)
      throws IOException {
    String output = work.resolve("arrow").toString();
    JobReport report = PreprocessJob.run(spark, input, output, true, conf);
    round.put("preprocess_images", report.get("images"));
    round.put("preprocess_wall_s", report.get("wall_s"));
    round.put("preprocess_images_per_s", report.get("images_per_s"));
  }

  private static void datasource(
      SparkSession spark, String input, Path work, Map<String, Object> round)
      throws IOException, InterruptedException {
    Path manifest = work.resolve("manifest.json");
    Files.deleteIfExists(manifest);
    Observation rows = new Observation("rows");
    long start = System.nanoTime();
    try (JobLabel label =
        JobLabel.of(
            spark.sparkContext(),
            "spindle-bench-datasource",
            "datasource",
            "bench datasource: spindle DataSource over " + input + " into noop",
            0)) {
      spark
          .read()
          .format(SpindleDataSource.NAME)
          .option(ScanOptions.MANIFEST, manifest.toString())
          .load(input)
          .observe(rows, functions.count(functions.lit(1)).as("n"))
          .write()
          .format("noop")
          .mode("overwrite")
          .save();
    }
    double wall = (System.nanoTime() - start) / 1e9;
    long images = ((Number) rows.getAsJava().get("n")).longValue();
    round.put("datasource_images", images);
    round.put("datasource_wall_s", wall);
    round.put("datasource_images_per_s", images / wall);
  }

  private static SparkSession session(
      int threads, Map<String, String> conf, Map<String, String> progressConf) {
    SparkSession.Builder b =
        SparkSession.builder()
            .master("local[" + threads + "]")
            .appName("spindle bench datasource")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false");
    conf.forEach(b::config);
    progressConf.forEach(b::config);
    return b.getOrCreate();
  }

  private static double median(List<Map<String, Object>> rounds, String key) {
    double[] v = rounds.stream().mapToDouble(r -> (double) r.get(key)).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
