package dev.spindle.spark.job;

import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.sink.OutputWriteException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;

/**
 * Entry point of {@code bin/spindle} and of {@code spark-submit --class
 * dev.spindle.spark.job.SpindleMain}: dispatches a command, prints its one-line summary and writes
 * its JSON report. Exit codes: 0 success, 1 the job failed, 2 a usage error.
 */
public final class SpindleMain {
  private static final String USAGE =
      String.join(
          "\n",
          "usage: spindle <command> [flags]",
          "",
          "commands:",
          "  demo        [--input DIR] [--output DIR] [--master URL]   generate a sample (if no --input),",
          "              preprocess it on Spark, print the summary",
          "  gen-sample  --output DIR [--shards 4] [--per-shard 64] [--width 320] [--height 240] [--seed 0]",
          "  preprocess  --input URI --output URI [--size 224] [--batch-size 256] [--threads N]",
          "              [--overwrite] [--report FILE] [--master URL] [--conf spark.key=value]...",
          "  feed        --input URI --world-size W [--epochs E] [--seed S] [--batch-size B] [--size 224]",
          "              [--resume STATE.json] [--report FILE] [--threads N] [--partitions P]",
          "              [--stop-after-batches K --save-state FILE] [--manifest FILE] [--master URL]",
          "              [--serve [--device auto|host|cuda] [--socket PATH] [--trainer-timeout S]]",
          "              (--serve: each rank's batches go to its PyTorch trainer via the bridge)",
          "  import-fashion-mnist --output URI [--limit N] [--shards 8] [--split train|t10k]",
          "              [--source DIR] [--report FILE]   Debian's Fashion-MNIST -> tar shards",
          "  example     fashion-mnist [--epochs N] [--limit SAMPLES] [--report FILE] [--world-size 2]",
          "              [--batch-size 64] [--test-limit N] [--work DIR]   train PyTorch trainers (DDP)",
          "              fed through the trainer bridge; reports test accuracy and trainer wait",
          "  bench       pipeline|images|feeder|datasource [flags]   (see README)",
          "  config      --example | --markdown   print every spark.spindle.* key with its default",
          "",
          "Every job also takes --properties-file FILE (spark.* settings, e.g. conf/examples/*.conf);",
          "flags and --conf given on the command line win over it.",
          "Without --master, jobs run on embedded Spark (local[*], bound to 127.0.0.1).");

  private static final Set<String> SPARK_FLAGS = Set.of("--master", "--report", "--threads");

  private SpindleMain() {}

  public static void main(String[] argv) {
    System.exit(run(argv, System.out, System.err));
  }

  /** Runs one command; returns the exit code. */
  public static int run(String[] argv, PrintStream out, PrintStream err) {
    if (argv.length == 0 || argv[0].equals("help") || argv[0].equals("--help") || argv[0].equals("-h")) {
      out.println(USAGE);
      return argv.length == 0 ? 2 : 0;
    }
    String command = argv[0];
    String[] rest = Arrays.copyOfRange(argv, 1, argv.length);
    try {
      rest = PropertiesFile.apply(rest);
      JobReport report =
          switch (command) {
            case "gen-sample" -> genSample(rest);
            case "preprocess" -> preprocess(rest);
            case "demo" -> demo(rest);
            case "feed" -> dev.spindle.spark.feed.FeedCommand.run(rest);
            case "import-fashion-mnist" -> dev.spindle.spark.example.ImportCommand.run(rest);
            case "example" -> dev.spindle.spark.example.ExampleCommand.run(rest);
            case "config" -> {
              config(rest, out);
              yield null;
            }
            case "bench" -> {
              Bench.run(rest);
              yield null;
            }
            default -> throw new Args.UsageException("Unknown command '" + command + "'");
          };
      if (report != null) {
        out.println(Summary.line(report));
      }
      return 0;
    } catch (Args.UsageException e) {
      err.println("spindle: " + e.getMessage());
      err.println(USAGE);
      return 2;
    } catch (Exception e) {
      err.println("spindle " + command + " failed: " + rootMessage(e));
      return 1;
    }
  }

  private static JobReport genSample(String[] argv) throws Exception {
    Args args = Args.parse("gen-sample", argv,
        Set.of("--output", "--shards", "--per-shard", "--width", "--height", "--seed", "--report"), Set.of());
    JobReport report = GenSample.run(GenSample.options(args), new Configuration());
    writeReport(args, report);
    return report;
  }

  private static JobReport preprocess(String[] argv) throws Exception {
    Args args = Args.parse("preprocess", argv,
        Set.of("--input", "--output", "--size", "--batch-size", "--threads", "--report", "--master"),
        Set.of("--overwrite"));
    String input = args.require("--input");
    String output = args.require("--output");
    return preprocess(args, input, output, args.has("--overwrite"));
  }

  private static JobReport preprocess(Args args, String input, String output, boolean overwrite)
      throws Exception {
    Map<String, String> settings = settings(args);
    SparkSession spark = Sessions.start("preprocess", args.get("--master"), settings);
    try {
      Map<String, String> conf = new LinkedHashMap<>();
      for (scala.Tuple2<String, String> kv : spark.sparkContext().getConf().getAll()) {
        conf.put(kv._1(), kv._2());
      }
      JobReport report = PreprocessJob.run(spark, input, output, overwrite, conf);
      writeReport(args, report);
      return report;
    } finally {
      spark.stop();
    }
  }

  private static JobReport demo(String[] argv) throws Exception {
    Args args = Args.parse("demo", argv,
        Set.of("--input", "--output", "--size", "--batch-size", "--threads", "--report", "--master"),
        Set.of());
    Path work = Path.of(System.getProperty("java.io.tmpdir"), "spindle-demo");
    String input = args.get("--input");
    if (input == null) {
      input = work.resolve("sample").toUri().toString();
      JobReport gen = GenSample.run(
          new GenSample.Options(input, 4, 64, 320, 240, 0), new Configuration());
      System.out.println(Summary.line(gen));
    }
    String output = args.get("--output", work.resolve("arrow").toUri().toString());
    JobReport report = preprocess(args, input, output, true);
    report.put("command", "demo");
    return report;
  }

  private static void config(String[] argv, PrintStream out) {
    Args args = Args.parse("config", argv, Set.of(), Set.of("--example", "--markdown"));
    out.print(args.has("--markdown")
        ? dev.spindle.spark.config.ConfigDocs.markdownTable()
        : dev.spindle.spark.config.ConfigDocs.sparkDefaultsExample());
  }

  /** CLI flags that stand for configuration keys, plus --conf pairs. */
  private static Map<String, String> settings(Args args) {
    Map<String, String> s = new LinkedHashMap<>(args.confs());
    putIf(s, args.get("--size"), "spark.spindle.image.size");
    putIf(s, args.get("--batch-size"), "spark.spindle.batchSize");
    putIf(s, args.get("--threads"), "spark.spindle.threads");
    return s;
  }

  private static void putIf(Map<String, String> s, String value, String key) {
    if (value != null) {
      s.put(key, value);
    }
  }

  private static void writeReport(Args args, JobReport report) throws Exception {
    String file = args.get("--report");
    if (file != null) {
      report.write(Path.of(file));
    }
  }

  /** The message to print for a failed command: the deepest cause that says what and where. */
  static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t && !(t instanceof PreprocessJob.JobFailure)
        && !(t instanceof OutputWriteException)) {
      if (t.getMessage() != null && t.getMessage().contains("Failed reading shard")) {
        break;
      }
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }
}
