package dev.spindle.spark.iobench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.spindle.Feed;
import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.feed.FeedJob;
import dev.spindle.spark.feed.FeedRequest;
import dev.spindle.spark.manifest.Manifest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.hadoop.fs.FileUtil;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * {@code bin/spindle bench io}: what {@code feed} reads from an object store per epoch, and how
 * fast it feeds from one, against the same feed from local disk. Each {@link IoVariant} runs one
 * epoch of {@code feed} (window shuffle, {@code --world-size} ranks) on an embedded Spark of its
 * own ({@code local[threads]}), reading the shards from {@code file://} or from the counted store
 * ({@link CountingFileSystem}, optionally with a latency per request). The manifest is counted
 * first, on the same session, and its reads reported apart ({@code manifest_count_*}): an epoch's
 * figures are the epoch's. An unmeasured {@code local} run warms the JVM first. Every round runs
 * every variant (odd rounds in reverse order, so the machine's drift hits each alike); the summary
 * is the median of the rounds. A benchmark: it reports, it asserts nothing. The caller's thread;
 * the data set, manifests and Spark's local folders live in a temporary folder, deleted at the end.
 */
public final class IoBench {
  static final long SEED = 1;

  private IoBench() {}

  /**
   * What to run.
   *
   * @param tars the shards to read, or null to generate {@code shards} × {@code perShard}
   * @param variants the variants' names, or empty for every one this build can run
   * @param args the command line, recorded in the report
   */
  public record Options(
      Path tars,
      int shards,
      int perShard,
      int worldSize,
      int batchSize,
      int shuffleWindow,
      int latencyMs,
      int rounds,
      int threads,
      List<String> variants,
      Path report,
      List<String> args) {
    public Options {
      if (tars != null && !Files.isDirectory(tars)) {
        throw new IllegalArgumentException("Invalid --tars: " + tars + " (not a directory)");
      }
      if (worldSize < 4) {
        throw new IllegalArgumentException(
            "Invalid --world-size: " + worldSize + " (must be >= 4: a sharded epoch)");
      }
      for (String v : variants) {
        if (IoVariant.named(v) == null) {
          throw new IllegalArgumentException(
              "Invalid --variants: unknown variant '"
                  + v
                  + "' (known: "
                  + IoVariant.ALL.stream().map(IoVariant::name).collect(Collectors.joining(", "))
                  + ")");
        }
        String key = IoVariant.named(v).unknownKey();
        if (key != null) {
          throw new IllegalArgumentException(
              "Invalid --variants: " + v + " needs " + key + ", which this build does not have");
        }
      }
    }
  }

  /** Runs the rounds, prints the report and writes it to {@code --report}; returns it. */
  public static Map<String, Object> run(Options o) throws Exception {
    long start = System.nanoTime();
    List<Double> loadStart = loadAverage();
    Path work = Files.createTempDirectory("spindle-bench-io");
    try {
      Path tars = o.tars();
      if (tars == null) {
        tars = work.resolve("tars");
        System.err.printf(
            "bench io: generating %d shards of %d samples%n", o.shards(), o.perShard());
        IoCorpus.write(tars, o.shards(), o.perShard());
      }
      Map<String, Object> report = header(o, tars);
      Map<String, String> skipped = new LinkedHashMap<>();
      List<IoVariant> chosen = choose(o, skipped);
      long warm = System.nanoTime(); // JIT and caches warmed, so round 0's first run is not slower
      new IoRun(o, IoVariant.named("local"), -1, tars, work).call();
      report.put("warmup_s", (System.nanoTime() - warm) / 1e9);
      List<Map<String, Object>> runs = new ArrayList<>();
      for (int r = 0; r < o.rounds(); r++) {
        List<IoVariant> order = new ArrayList<>(chosen);
        if (r % 2 == 1) {
          java.util.Collections.reverse(order);
        }
        List<Map<String, Object>> round = new ArrayList<>();
        for (IoVariant v : order) {
          Map<String, Object> run = new IoRun(o, v, r, tars, work).call();
          System.err.println("bench io: " + run);
          round.add(run);
        }
        IoSummary.compareToLocal(round);
        runs.addAll(round);
      }
      report.put("dataset_bytes", runs.get(0).get("dataset_bytes"));
      report.put("dataset_samples", runs.get(0).get("dataset_samples"));
      report.put("variants", IoSummary.medians(chosen, runs));
      report.put("variants_skipped", skipped);
      report.put("runs", runs);
      report.put("load_average_start", loadStart);
      report.put("load_average_end", loadAverage());
      report.put("wall_s", (System.nanoTime() - start) / 1e9);
      write(report, o.report());
      return report;
    } finally {
      FileUtil.fullyDelete(work.toFile());
    }
  }

  private static Map<String, Object> header(Options o, Path tars) {
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("benchmark", "io");
    report.put("command", "bin/spindle " + String.join(" ", o.args()));
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("tars", o.tars() == null ? null : tars.toString());
    p.put("generated", o.tars() == null);
    p.put("shards", o.tars() == null ? o.shards() : null);
    p.put("per_shard", o.tars() == null ? o.perShard() : null);
    p.put("world_size", o.worldSize());
    p.put("batch_size", o.batchSize());
    p.put("shuffle_window", o.shuffleWindow());
    p.put("latency_ms", o.latencyMs());
    p.put("rounds", o.rounds());
    p.put("threads", o.threads());
    p.put("master", "local[" + o.threads() + "]");
    p.put("seed", SEED);
    report.put("parameters", p);
    report.put(
        "machine",
        Map.of(
            "cores",
            Runtime.getRuntime().availableProcessors(),
            "java",
            System.getProperty("java.version")));
    return report;
  }

  private static List<IoVariant> choose(Options o, Map<String, String> skipped) {
    List<IoVariant> chosen = new ArrayList<>();
    for (IoVariant v : IoVariant.ALL) {
      if (!o.variants().isEmpty() && !o.variants().contains(v.name())) {
        continue;
      }
      String key = v.unknownKey();
      if (key == null) {
        chosen.add(v);
      } else {
        skipped.put(v.name(), key + " is not a key of this build");
        System.err.println("bench io: skipping " + v.name() + ": " + skipped.get(v.name()));
      }
    }
    return chosen;
  }

  /** One variant's run in one round, on a session of its own; what it reports. */
  private record IoRun(Options o, IoVariant v, int round, Path tars, Path work) {
    Map<String, Object> call() throws Exception {
      Path scratch = work.resolve("r" + round + "-" + v.name());
      Files.createDirectories(scratch);
      String input =
          v.source() == IoVariant.Source.LOCAL
              ? tars.toAbsolutePath().toUri().toString()
              : CountingFileSystem.uriOf(tars);
      SparkSession spark = session(scratch);
      try {
        return measure(spark, input, scratch.resolve("manifest.json").toString());
      } finally {
        spark.stop();
        FileUtil.fullyDelete(scratch.toFile());
      }
    }

    private Map<String, Object> measure(SparkSession spark, String input, String manifestFile)
        throws IOException {
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("variant", v.name());
      out.put("round", round);
      StoreCounters.Counts before = StoreCounters.snapshot();
      Manifest manifest = count(spark, input, manifestFile);
      StoreCounters.Counts counting = StoreCounters.snapshot().minus(before);
      String state = null;
      for (int e = 0; e < v.warmEpochs(); e++) {
        state = feed(spark, input, manifestFile, e + 1, state).loaderState();
      }
      StoreCounters.takePeakWaiting();
      before = StoreCounters.snapshot();
      FeedReport report;
      try (ContentDigest digest = ContentDigest.install()) {
        report = feed(spark, input, manifestFile, v.warmEpochs() + 1, state);
        out.put("feed_digest", digest.hex());
        out.put("batches_hashed", digest.batches());
      }
      StoreCounters.Counts epoch = StoreCounters.snapshot().minus(before);
      IoSummary.fill(out, v, manifest, report, counted() ? epoch : null, counting);
      out.put("peak_concurrent_requests", counted() ? StoreCounters.takePeakWaiting() : null);
      out.put("latency_ms", v.source() == IoVariant.Source.STORE_LATENCY ? o.latencyMs() : 0);
      return out;
    }

    private boolean counted() {
      return v.source() != IoVariant.Source.LOCAL;
    }

    private Manifest count(SparkSession spark, String input, String manifestFile)
        throws IOException {
      Map<String, String> spindle =
          Arrays.stream(spark.sparkContext().getConf().getAll())
              .filter(t -> t._1().startsWith("spark.spindle."))
              .collect(Collectors.toMap(t -> t._1(), t -> t._2()));
      FeedRequest request =
          new FeedRequest(input, manifestFile, o.worldSize(), 1, null, 0, Settings.of(spindle));
      return FeedJob.loadManifest(JavaSparkContext.fromSparkContext(spark.sparkContext()), request)
          .manifest();
    }

    private FeedReport feed(
        SparkSession spark, String input, String manifestFile, int epochs, String state)
        throws IOException {
      Feed feed =
          Spindle.feed(spark)
              .input(input)
              .manifest(manifestFile)
              .worldSize(o.worldSize())
              .epochs(epochs)
              .batchSize(o.batchSize())
              .seed(SEED)
              .set(SpindleConfig.SHUFFLE_WINDOW.key(), Integer.toString(o.shuffleWindow()));
      if (state != null) {
        feed.resume(state);
      }
      return feed.run();
    }

    private SparkSession session(Path scratch) {
      long latency = v.source() == IoVariant.Source.STORE_LATENCY ? o.latencyMs() : 0;
      SparkSession.Builder b =
          SparkSession.builder()
              .master("local[" + o.threads() + "]")
              .appName("spindle bench io " + v.name())
              .config("spark.driver.host", "127.0.0.1")
              .config("spark.driver.bindAddress", "127.0.0.1")
              .config("spark.ui.enabled", "false")
              .config("spark.ui.showConsoleProgress", "false")
              .config("spark.local.dir", scratch.resolve("spark-local").toString())
              .config("spark.spindle.threads", Integer.toString(o.threads()))
              .config(
                  "spark.hadoop." + CountingFileSystem.IMPL_KEY, CountingFileSystem.class.getName())
              .config(
                  "spark.hadoop.fs." + CountingFileSystem.SCHEME + ".impl.disable.cache", "true")
              .config("spark.hadoop." + CountingFileSystem.LATENCY_KEY, Long.toString(latency));
      v.conf(scratch).forEach(b::config);
      return b.getOrCreate();
    }
  }

  private static void write(Map<String, Object> report, Path file) throws IOException {
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report);
    System.out.println(json);
    if (file != null) {
      Path parent = file.toAbsolutePath().getParent();
      Files.createDirectories(parent);
      Files.writeString(file, json + "\n");
    }
  }

  private static List<Double> loadAverage() throws IOException {
    String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
    return List.of(Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2]));
  }
}
