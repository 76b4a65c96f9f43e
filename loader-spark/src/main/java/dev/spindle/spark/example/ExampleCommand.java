package dev.spindle.spark.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.gpu.bridge.Admission;
import dev.spindle.gpu.bridge.BridgeServer;
import dev.spindle.gpu.bridge.BridgeStats;
import dev.spindle.gpu.bridge.RankFeed;
import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.gpu.device.NormalizeSpec;
import dev.spindle.gpu.device.SharedMemoryDevice;
import dev.spindle.gpu.feed.FeederConfig;
import dev.spindle.gpu.feed.GpuFeeder;
import dev.spindle.spark.feed.FeederConsumer;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.plan.PlanSpec;
import dev.spindle.spark.plan.Remainder;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;

/**
 * {@code example fashion-mnist}: imports Fashion-MNIST into tar shards (a Spark job), opens one
 * shared-memory feeder per rank and the trainer bridge, starts W PyTorch trainer processes (DDP,
 * gloo, CPU) that receive batches through the bridge, runs a feed ({@link Spindle#feed}) into the
 * feeders, and reports the trainers' test accuracy and how long they waited for data. Spark must
 * run embedded (the caller's session), so the feed tasks and the feeders share this JVM. Main
 * thread; the report is JSON.
 */
public final class ExampleCommand {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** The example's remainder policy, passed to the feed job: the planned batches depend on it. */
  private static final Remainder REMAINDER = Remainder.DROP_LAST;

  private ExampleCommand() {}

  /**
   * What to run. {@code ownWork}: the work directory is a temporary one the example made (see
   * {@link #options}), removed when the example ends; a named one is kept.
   */
  public record Options(int epochs, int limit, int world, int batch, int testLimit, Path work,
      boolean ownWork, Path source, String python) {}

  /**
   * The options, with {@code work} or else a new temporary directory as the work directory. Call
   * it once every other value is checked: a refused command line leaves no directory behind.
   */
  public static Options options(int epochs, int limit, int world, int batch, int testLimit,
      Path work, Path source, String python) throws IOException {
    boolean own = work == null;
    Path dir = own ? Files.createTempDirectory("spindle-example-") : work;
    return new Options(epochs, limit, world, batch, testLimit, dir.toAbsolutePath(), own,
        source, python);
  }

  /** The master the example runs on by default: enough task slots for the feed's ranks. */
  public static String defaultMaster(int world) {
    return "local[" + Math.max(4, 2 * world) + "]";
  }

  /** Runs the example on {@code spark} (embedded); removes its own work directory at the end. */
  public static JobReport run(SparkSession spark, Options o)
      throws IOException, InterruptedException {
    JobReport report;
    try {
      report = runIn(spark, o);
    } catch (Throwable t) {
      if (o.ownWork()) {
        try {
          WorkDirs.delete(o.work());
        } catch (RuntimeException e) {
          t.addSuppressed(e);
        }
      }
      throw t;
    }
    if (o.ownWork()) {
      WorkDirs.delete(o.work());
    }
    return report;
  }

  private static JobReport runIn(SparkSession spark, Options o)
      throws IOException, InterruptedException {
    Files.createDirectories(o.work());
    String shards = o.work().resolve("shards").toUri().toString();
    JobReport imported = FashionMnistImport.run(spark, o.source(), "train", shards, o.limit(),
        Math.max(o.world(), 4));
    long batches = plannedBatches(o, ((Number) imported.get("samples")).longValue());
    List<GpuFeeder> feeders = new ArrayList<>();
    try {
      Map<Integer, GpuFeeder> byRank = new LinkedHashMap<>();
      List<RankFeed> feeds = new ArrayList<>();
      for (int r = 0; r < o.world(); r++) {
        GpuFeeder f = GpuFeeder.open(new SharedMemoryDevice(), FeederConfig.of(o.batch(),
            NormalizeSpec.raw(28, 28, 3)).withSlots(4).withLeaseTimeout(Duration.ofMinutes(10)));
        feeders.add(f);
        byRank.put(r, f);
        feeds.add(new RankFeed(r, f, 0, "", batches));
      }
      RunToken token = RunToken.random();
      try (BridgeServer bridge = BridgeServer.start(o.work().resolve("bridge/bridge.sock"),
          o.world(), feeds, Admission.of(token))) {
        System.out.println("spindle example: trainer bridge on " + bridge.socketPath());
        return train(spark, o, bridge, token, byRank, imported);
      }
    } finally {
      feeders.forEach(GpuFeeder::close);
    }
  }

  /**
   * The batches each rank's feeder serves over every epoch: the feed job plans each epoch of the
   * imported samples afresh, {@code REMAINDER}, so each rank gets the same count every epoch. The
   * bridge ends each rank there and refuses a trainer's resume point beyond it.
   */
  static long plannedBatches(Options o, long samples) {
    PlanSpec spec = PlanSpec.of(0, 0, o.world(), o.batch(), REMAINDER);
    return (long) o.epochs() * spec.freshBatchesPerRank(samples);
  }

  private static JobReport train(SparkSession spark, Options o, BridgeServer bridge,
      RunToken token, Map<Integer, GpuFeeder> feeders, JobReport imported)
      throws IOException, InterruptedException {
    Trainers trainers = Trainers.start(o, bridge.socketPath(), token, freePort());
    FeederConsumer.install(feeders);
    FeedReport feed;
    try {
      trainers.failFeedersOnExit(feeders.values());
      feed = Spindle.feed(spark).input(o.work().resolve("shards").toString())
          .worldSize(o.world()).batchSize(o.batch()).size(28).remainder(REMAINDER.name())
          .partitions(o.world()).manifest(o.work().resolve("manifest.json").toString())
          .epochs(o.epochs())
          .run();
      feeders.values().forEach(GpuFeeder::endOfInput);
      trainers.await(TimeUnit.MINUTES.toSeconds(10));
    } catch (RuntimeException | IOException | InterruptedException e) {
      trainers.kill();
      throw e;
    } finally {
      FeederConsumer.uninstall();
    }
    return report(o, trainers, feed, imported, bridge.stats());
  }

  private static JobReport report(Options o, Trainers trainers, FeedReport feed,
      JobReport imported, BridgeStats stats) throws IOException {
    JsonNode r0 = JSON.readTree(trainers.reportFile(0).toFile());
    long samples = 0;
    double wait = 0;
    double step = 0;
    List<Double> waits = new ArrayList<>();
    for (int r = 0; r < o.world(); r++) {
      JsonNode n = JSON.readTree(trainers.reportFile(r).toFile());
      samples += n.get("train_samples").asLong();
      wait = Math.max(wait, n.get("wait_s").asDouble());
      step = Math.max(step, n.get("step_s").asDouble());
      waits.add(n.get("wait_s").asDouble());
    }
    double wall = (System.nanoTime() - trainers.startNanos()) / 1e9;
    return new JobReport("example fashion-mnist")
        .put("images", samples)
        .put("wall_s", wall)
        .put("images_per_s", samples / wall)
        .put("test_accuracy", r0.get("test_accuracy").asDouble())
        .put("test_samples", r0.get("test_samples").asLong())
        .put("train_samples", samples)
        .put("epochs", o.epochs())
        .put("world_size", o.world())
        .put("batch_size", o.batch())
        .put("trainer_wait_s", wait)
        .put("trainer_wait_s_per_rank", waits)
        .put("trainer_step_s", step)
        .put("train_wall_s", r0.get("wall_s").asDouble())
        .put("imported_samples", imported.get("samples"))
        .put("bridge_batches_delivered", stats.batchesDelivered())
        .put("feed", feed.fields());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
