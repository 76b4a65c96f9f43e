package dev.spindle.spark.soak;

import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.spark.example.GenSample;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;

/**
 * {@code bench soak}: {@code feed --serve} on the host device with two Python trainers for many
 * epochs over a generated dataset, sampling this JVM's and the trainers' resources every few
 * seconds and at each epoch's end; then the end state once the session is stopped. The report (see
 * {@link #run}) says whether anything grows from epoch to epoch and what was left. The caller's
 * thread runs it; the feed job runs on one thread of its own.
 */
public final class SoakBench {
  static final int WORLD = 2;

  /**
   * What to run: {@code epochs} (at least 2), a sample every {@code intervalSeconds}, a dataset of
   * {@code shards} x {@code perShard} samples, trainers on {@code python}.
   */
  public record Options(
      int epochs, double intervalSeconds, int shards, int perShard, String python) {
    public Options {
      if (epochs < 2) {
        throw new IllegalArgumentException(
            "Invalid --epochs: "
                + epochs
                + " (must be >= 2: growth"
                + " is measured from the first epoch's end)");
      }
    }
  }

  private SoakBench() {}

  /**
   * Runs the soak on the session {@code sessions} starts (local, {@value #WORLD} task slots or
   * more), which it stops. Returns the report's fields: {@code epochs}, {@code wall_s}, {@code
   * load_average_start}, {@code load_average} (at the end: 1, 5, 15 minutes), {@code series}
   * ({@link SoakSeries#summary}), {@code threads_added} (the names behind the thread series'
   * growth) and {@code end_state} ({@link EndState}); the caller owns them. The dataset and the
   * trainers' files, in a temporary folder, are deleted.
   *
   * @throws IllegalStateException when the feed job or a trainer fails
   */
  public static Map<String, Object> run(Options o, Supplier<SparkSession> sessions)
      throws Exception {
    Path dir = Files.createTempDirectory("spindle-soak-");
    try {
      return run(o, sessions, dir);
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  private static Map<String, Object> run(Options o, Supplier<SparkSession> sessions, Path dir)
      throws Exception {
    Path in = dir.resolve("in");
    GenSample.run(
        new GenSample.Options(in.toString(), o.shards(), o.perShard(), 160, 120, 1),
        new Configuration());
    EndState.Baseline baseline = EndState.baseline();
    List<Double> loadBefore = loadAverage();
    Path socket = dir.resolve("run").resolve("bridge.sock");
    long start = System.nanoTime();
    SparkSession session = sessions.get();
    Map<String, Object> report = new LinkedHashMap<>();
    try {
      CompletableFuture<FeedReport> job = new CompletableFuture<>();
      Thread feeding =
          new Thread(() -> feed(session, in, socket, o.epochs(), job), "spindle-soak-feed");
      feeding.start();
      Sampler sampler = sample(o, job, socket, dir);
      report.put("epochs", o.epochs());
      report.put("wall_s", (System.nanoTime() - start) / 1e9);
      report.put("interval_s", o.intervalSeconds());
      report.put("load_average_start", loadBefore);
      report.put("load_average", loadAverage());
      report.put("series", sampler.series().summary(Sampler.NAMES, o.epochs()));
      report.put("threads_added", sampler.threadsAdded());
    } finally {
      session.stop();
    }
    report.put("end_state", EndState.measure(baseline, socket.getParent()));
    return report;
  }

  /** One line: the epochs, each series' growth per epoch, and the end state's counts. */
  @SuppressWarnings("unchecked")
  public static String summary(Map<String, Object> report) {
    StringBuilder b =
        new StringBuilder(
            String.format(
                "soak: %s epochs in %.0f s; growth per epoch:",
                report.get("epochs"), (Double) report.get("wall_s")));
    Map<String, Map<String, Object>> series =
        (Map<String, Map<String, Object>>) report.get("series");
    series.forEach(
        (name, s) ->
            b.append(String.format(" %s %+.0f,", name, (Double) s.get("growth_per_epoch"))));
    Map<String, Object> end = (Map<String, Object>) report.get("end_state");
    return b.append(
            String.format(
                " end state: arrow_bytes %s, shm_files %s, socket_files %s," + " threads %s",
                end.get("arrow_bytes"),
                end.get("shm_files"),
                end.get("socket_files"),
                end.get("threads")))
        .toString();
  }

  /** The feed job, on a thread of its own that ends with it (no pool thread outlives the soak). */
  private static void feed(
      SparkSession session, Path in, Path socket, int epochs, CompletableFuture<FeedReport> into) {
    try {
      into.complete(
          Spindle.feed(session)
              .input(in.toString())
              .worldSize(WORLD)
              .epochs(epochs)
              .batchSize(16)
              .size(64)
              .seed(1)
              .serve()
              .device("host")
              .socket(socket.toString())
              .trainerTimeout(Duration.ofSeconds(120))
              .run());
    } catch (Throwable e) { // the sampler waits on it: never lost, checked ones from Scala included
      into.completeExceptionally(e);
    }
  }

  private static Sampler sample(Options o, CompletableFuture<FeedReport> job, Path socket, Path dir)
      throws Exception {
    Path token = socket.resolveSibling(socket.getFileName() + ".token");
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (!Files.exists(token) && !job.isDone() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    if (!Files.exists(token)) {
      job.get(); // its failure, if that is why
      throw new IllegalStateException("No trainer bridge on " + socket + " within 120 s");
    }
    try (SoakTrainers trainers =
        new SoakTrainers(
            o.python(), socket, Files.readString(token).trim(), WORLD, o.epochs(), dir)) {
      Sampler sampler = new Sampler(trainers, o.intervalSeconds());
      sampler.until(job, o.epochs());
      try {
        job.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException("The soak's feed job failed: " + e.getCause(), e);
      }
      trainers.awaitExit(60);
      return sampler;
    }
  }

  private static List<Double> loadAverage() throws IOException {
    String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
    return List.of(Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2]));
  }
}
