package dev.spindle.spark.feed;

import dev.spindle.spark.job.Args;
import dev.spindle.spark.job.Sessions;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.plan.PlanSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;

/**
 * The {@code feed} command line: {@code --input URI --world-size W [--epochs E] [--seed S]
 * [--batch-size B] [--size 224] [--resume STATE.json] [--report FILE] [--threads N]
 * [--partitions P] [--stop-after-batches K --save-state FILE] [--manifest FILE] [--remainder
 * DROP_LAST|PAD|EXACT] [--serve [--device auto|host|cuda] [--socket PATH] [--trainer-timeout S]]
 * [--master URL] [--conf key=value]...}. Flags that stand for configuration keys are put into the
 * session's configuration. With {@code --serve} each rank's batches go to its PyTorch trainer
 * through the trainer bridge of the executor that serves the rank ({@code RankServeTask}). Mistakes in flags throw {@link Args.UsageException}
 * before any Spark work. Main thread.
 */
public final class FeedCommand {
  private static final Set<String> VALUE_FLAGS = Set.of("--input", "--world-size", "--epochs",
      "--seed", "--batch-size", "--size", "--resume", "--report", "--threads", "--partitions",
      "--stop-after-batches", "--save-state", "--manifest", "--remainder", "--master",
      "--device", "--socket", "--trainer-timeout");
  private static final Set<String> SERVE_FLAGS = Set.of("--device", "--socket",
      "--trainer-timeout");
  private static final Map<String, String> KEY_FLAGS = Map.of(
      "--seed", "spark.spindle.seed",
      "--batch-size", "spark.spindle.batchSize",
      "--size", "spark.spindle.image.size",
      "--threads", "spark.spindle.threads",
      "--partitions", "spark.spindle.feed.partitions",
      "--remainder", "spark.spindle.feed.remainder",
      "--serve", "spark.spindle.feed.serve",
      "--device", "spark.spindle.feed.device",
      "--socket", "spark.spindle.feed.socket",
      "--trainer-timeout", "spark.spindle.feed.trainerTimeoutSeconds");

  private FeedCommand() {}

  /** Parses {@code argv}, runs the job on a session of its own, writes report and state. */
  public static JobReport run(String[] argv) throws IOException {
    Args flags = parse(argv);
    Map<String, String> settings = settings(flags);
    checkOptions(flags, settings);
    SparkSession spark = Sessions.start("feed", flags.get("--master"), settings);
    try {
      return run(spark, flags);
    } finally {
      spark.stop();
    }
  }

  /** Runs on an existing session (tests, notebooks); the session stays open. */
  public static JobReport run(SparkSession spark, String[] argv) throws IOException {
    Args flags = parse(argv);
    checkOptions(flags, settings(flags));
    return run(spark, flags);
  }

  private static JobReport run(SparkSession spark, Args flags) throws IOException {
    Map<String, String> conf = new LinkedHashMap<>();
    for (scala.Tuple2<String, String> kv : spark.sparkContext().getConf().getAll()) {
      conf.put(kv._1(), kv._2());
    }
    conf.putAll(settings(flags));
    String resume = flags.get("--resume");
    LoaderState state = resume == null ? null : LoaderState.fromJson(read(resume));
    FeedRequest request = new FeedRequest(flags.get("--input"), flags.get("--manifest"),
        PlanSpec.parseCount("world size", flags.get("--world-size")),
        count(flags, "--epochs", 1), state, count(flags, "--stop-after-batches", 0), conf);
    FeedResult result = FeedJob.run(spark, request);
    if (flags.get("--save-state") != null) {
      write(flags.get("--save-state"), result.state().toJson() + "\n");
    }
    if (flags.get("--report") != null) {
      result.report().write(Path.of(flags.get("--report")));
    }
    return result.report();
  }

  static Args parse(String[] argv) {
    return Args.parse("feed", argv, VALUE_FLAGS, Set.of("--serve"));
  }

  /** {@code --conf} pairs, then the flags that stand for configuration keys. */
  private static Map<String, String> settings(Args flags) {
    Map<String, String> s = new LinkedHashMap<>(flags.confs());
    KEY_FLAGS.forEach((flag, key) -> {
      if (flags.get(flag) != null) {
        s.put(key, flags.get(flag));
      }
    });
    return s;
  }

  /** Refuses bad flags before a session starts, naming the flag and the value. */
  private static void checkOptions(Args flags, Map<String, String> settings) {
    if (flags.get("--input") == null || flags.get("--input").isBlank()) {
      throw new Args.UsageException("'feed' needs --input");
    }
    if (flags.get("--world-size") == null) {
      throw new Args.UsageException("'feed' needs --world-size");
    }
    try {
      PlanSpec.parseCount("world size", flags.get("--world-size"));
      for (String key : settings.keySet()) {
        dev.spindle.spark.config.SpindleConfig.keys().stream()
            .filter(k -> k.key().equals(key)).forEach(k -> k.parse(settings.get(key)));
      }
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
    count(flags, "--epochs", 1);
    checkServe(flags);
    int stop = count(flags, "--stop-after-batches", 0);
    if (stop > 0 && flags.get("--save-state") == null) {
      throw new Args.UsageException("--stop-after-batches needs --save-state FILE to continue from");
    }
  }

  /** Serving flags need {@code --serve}; partitions are one per rank while serving. */
  private static void checkServe(Args flags) {
    if ("true".equals(flags.get("--serve"))) {
      if (flags.get("--partitions") != null) {
        throw new Args.UsageException("--partitions does not apply with --serve: serving runs one"
            + " task per rank");
      }
      return;
    }
    for (String f : SERVE_FLAGS) {
      if (flags.get(f) != null) {
        throw new Args.UsageException(f + " needs --serve (it configures the trainer bridge)");
      }
    }
  }

  private static int count(Args flags, String flag, int absent) {
    String v = flags.get(flag);
    if (v == null) {
      return absent;
    }
    try {
      return PlanSpec.parseCount(flag.substring(2).replace('-', ' '), v);
    } catch (IllegalArgumentException e) {
      throw new Args.UsageException(e.getMessage());
    }
  }

  private static String read(String file) throws IOException {
    try {
      return Files.readString(Path.of(file));
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IOException("Resume state not found: " + file, e);
    }
  }

  private static void write(String file, String text) throws IOException {
    Path path = Path.of(file).toAbsolutePath();
    Files.createDirectories(path.getParent());
    Path temp = path.resolveSibling(path.getFileName() + ".tmp");
    Files.writeString(temp, text);
    Files.move(temp, path, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }
}
