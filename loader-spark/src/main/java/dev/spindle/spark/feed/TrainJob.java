package dev.spindle.spark.feed;

import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.job.HadoopConf;
import dev.spindle.spark.metrics.TaskTimeline;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.progress.JobLabel;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.shard.Manifest;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * {@code train}: one barrier stage of {@code world} tasks, task {@code r} starting rank {@code r}'s
 * training script beside its executor and serving it every epoch of the run ({@link TrainTask}).
 * When a trainer fails (exits with an error, is killed), every rank is restarted in a new stage,
 * each from the loader state its trainer saved last ({@link TrainStateStore}), up to {@code
 * spark.spindle.train.maxRestarts} times; a trainer that hangs, or any other failure, ends the job
 * with the failing ranks' own account and last output lines. Driver thread.
 */
public final class TrainJob {
  private static final Logger LOG = LoggerFactory.getLogger(TrainJob.class);
  private static final ClassTag<TrainRankResult> RESULT =
      ClassTag$.MODULE$.apply(TrainRankResult.class);

  private static final long EXIT_WAIT_MS = 30_000;

  /**
   * The bridge socket of a train run unless {@code spark.spindle.feed.socket} is set: one per
   * executor JVM, since Spindle hands each trainer its path and a restarted rank may run in another
   * executor of the same node.
   */
  static final String TRAIN_SOCKET = "/tmp/spindle-{user}/train-{pid}.sock";

  private TrainJob() {}

  public static FeedResult run(SparkSession spark, FeedRequest request, TrainSettings train)
      throws IOException {
    long startNanos = System.nanoTime();
    Map<String, String> conf = request.conf();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    int world = request.worldSize();
    ServeStage.requireSlots(jsc, world, "train");
    ExecutorServing.closeOnStop(jsc.sc());
    ManifestCache.Loaded loaded = FeedJob.loadManifest(jsc, request);
    Manifest manifest = loaded.manifest();
    LoaderState start = FeedJob.startState(manifest, request);
    if (start.epoch() >= request.epochs()) {
      throw new IllegalArgumentException(
          "Nothing to do: the state is at epoch "
              + start.epoch()
              + " and --epochs is "
              + request.epochs());
    }
    String runId = UUID.randomUUID().toString();
    TrainStateStore store = store(jsc, conf, runId);
    ServeSettings serve =
        ServeSettings.from(
            conf.containsKey(SpindleConfig.FEED_SOCKET.key())
                ? conf
                : withSocket(conf, TRAIN_SOCKET));
    String line =
        "spindle train: "
            + world
            + " rank(s) of "
            + train.script()
            + " on "
            + serve.device()
            + " feeders, epochs "
            + start.epoch()
            + ".."
            + (request.epochs() - 1)
            + "; loader states in "
            + store.location();
    System.out.println(line);
    LOG.info(line);
    Broadcast<TrainInputs> inputs =
        jsc.broadcast(TrainInputs.of(manifest, start.toJson(), request.epochs()));
    TrainTask task =
        new TrainTask(
            inputs,
            FeedSettings.from(conf, manifest),
            new HadoopConf(jsc.hadoopConfiguration()),
            serve,
            train,
            store,
            runId,
            ProgressCounters.register(jsc.sc()));
    TrainReport report = new TrainReport(request, train, loaded, store.location());
    jsc.setLocalProperty("spark.job.interruptOnCancel", "true");
    String epochs = "epochs " + start.epoch() + ".." + (request.epochs() - 1);
    try (JobLabel label =
        JobLabel.of(
            jsc.sc(),
            "spindle-train-" + runId,
            "train " + epochs,
            "train " + train.script() + " " + epochs + " (" + world + " ranks)",
            rows(start.resume(manifest, world), request.epochs()))) {
      report.finished(attempts(jsc, world, task, store, train, report, inputs.value(), label));
      if (SpindleConfig.get(conf, SpindleConfig.TRAIN_STATE_DIR).isEmpty()) {
        store.delete(); // its own temporary directory: nothing to resume from a finished run
      }
    } finally {
      jsc.setLocalProperty("spark.job.interruptOnCancel", null);
      inputs.destroy();
    }
    LoaderState end = LoaderState.initial(manifest, start.spec().withEpoch(request.epochs()));
    return new FeedResult(
        report.build(end, (System.nanoTime() - startNanos) / 1e9).put("master", jsc.master()), end);
  }

  /** Rows the run delivers: the rest of the first epoch, then whole epochs up to {@code epochs}. */
  private static long rows(EpochPlan first, int epochs) {
    long batches = 0;
    for (int r = 0; r < first.worldSize(); r++) {
      batches += first.batchesPerRank() - first.rank(r).firstBatch();
    }
    batches += (long) (epochs - first.epoch() - 1) * first.batchesPerRank() * first.worldSize();
    return batches * first.spec().batchSize();
  }

  /** Runs the stage, restarting it after trainers' failures while restarts are left. */
  private static List<TrainRankResult> attempts(
      JavaSparkContext jsc,
      int world,
      TrainTask task,
      TrainStateStore store,
      TrainSettings train,
      TrainReport report,
      TrainInputs in,
      JobLabel label)
      throws IOException {
    for (int attempt = 0; ; attempt++) {
      store.clearExits(world);
      try {
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; r < world; r++) {
          ranks.add(r);
        }
        try (TaskTimeline recorder = TaskTimeline.attach(jsc.sc())) {
          List<TrainRankResult> results =
              new JavaRDD<>(
                      jsc.parallelize(ranks, world)
                          .rdd()
                          .barrier()
                          .mapPartitions(task, false, RESULT),
                      RESULT)
                  .collect();
          report.timeline(
              recorder.tasks(
                  world,
                  TaskTimeline.WAIT_MS,
                  p -> p < results.size() ? results.get(p).timelineCounts() : null));
          return results;
        }
      } catch (Exception e) { // collect() throws SparkException, a checked one, undeclared
        List<TrainerExit> exits = awaitExits(store, world);
        List<TrainerExit> causes =
            exits.stream()
                .filter(TrainerExit::cause)
                .sorted(java.util.Comparator.comparingLong(TrainerExit::endedAtMs))
                .toList();
        if (causes.isEmpty()) { // no rank failed on its own account: Spark's error says why
          throw e instanceof RuntimeException r ? r : new IllegalStateException(e.getMessage(), e);
        }
        report.failedAttempt(exits);
        boolean restartable = causes.stream().allMatch(TrainerExit::restartable);
        if (!restartable || attempt >= train.maxRestarts()) {
          throw new TrainFailure(message(causes, attempt, restartable, train, store), e);
        }
        String line =
            "spindle train: "
                + causes.size()
                + " rank(s) failed ("
                + causes.get(0).message()
                + "; rank "
                + causes.get(0).rank()
                + "); restarting every"
                + " rank from its saved loader state (restart "
                + (attempt + 1)
                + " of at most "
                + train.maxRestarts()
                + ")";
        System.out.println(line);
        LOG.warn(line);
        label.continuing(rowsSaved(store, world, in));
      }
    }
  }

  /** Rows the ranks' saved states say were consumed since the run began: the restart's start. */
  private static long rowsSaved(TrainStateStore store, int world, TrainInputs in)
      throws IOException {
    long batches = 0;
    RankStart.Legs legs = new RankStart.Legs(in, world);
    for (int r = 0; r < world; r++) {
      batches += RankStart.batchesSinceRunStart(r, legs, store.state(r).orElse(null));
    }
    return batches * LoaderState.fromJson(in.startState()).spec().batchSize();
  }

  private static String message(
      List<TrainerExit> causes,
      int attempt,
      boolean restartable,
      TrainSettings train,
      TrainStateStore store) {
    StringBuilder m = new StringBuilder("spindle train failed");
    if (restartable) {
      m.append(" after ")
          .append(attempt)
          .append(" restart(s) (spark.spindle.train.maxRestarts=")
          .append(train.maxRestarts())
          .append(')');
    }
    m.append(":");
    causes.forEach(c -> m.append('\n').append(c.describe()));
    m.append("\nEach rank's loader state is kept in ")
        .append(store.location())
        .append(": the same command with --state-dir ")
        .append(store.location())
        .append(" resumes every rank from it.");
    return m.toString();
  }

  /**
   * How each rank's task of a failed stage ended, once every one has said (a cancelled task first
   * kills its trainer and saves its last state: a restart must not read the state before that), or
   * after {@link #EXIT_WAIT_MS} (a task that never started, or whose executor died, says nothing).
   */
  private static List<TrainerExit> awaitExits(TrainStateStore store, int world) throws IOException {
    long deadline = System.currentTimeMillis() + EXIT_WAIT_MS;
    while (true) {
      List<TrainerExit> exits = new ArrayList<>();
      for (int r = 0; r < world; r++) {
        store.exit(r).map(TrainerExit::fromJson).ifPresent(exits::add);
      }
      if (exits.size() == world || System.currentTimeMillis() > deadline) {
        return exits;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return exits;
      }
    }
  }

  /** The run's state store: the configured directory, else a new local one (local masters). */
  private static TrainStateStore store(JavaSparkContext jsc, Map<String, String> conf, String runId)
      throws IOException {
    String dir = SpindleConfig.get(conf, SpindleConfig.TRAIN_STATE_DIR);
    if (dir.isEmpty()) {
      String master = jsc.master();
      if (needsStateDir(master)) {
        throw new IllegalArgumentException(stateDirRequired(master));
      }
      dir = Files.createTempDirectory("spindle-train-").toUri().toString();
    }
    return new TrainStateStore(dir, new HadoopConf(jsc.hadoopConfiguration()));
  }

  /** Whether a run on {@code master} needs a state directory set: any master but a local one. */
  public static boolean needsStateDir(String master) {
    return !master.startsWith("local");
  }

  /** Why a run on {@code master} without a state directory is refused. */
  public static String stateDirRequired(String master) {
    return "train on master "
        + master
        + " needs --state-dir"
        + " (spark.spindle.train.stateDir): a directory every node can read and write"
        + " (hdfs://, s3a://, a shared mount), where each rank's loader state outlives its"
        + " trainer";
  }

  private static Map<String, String> withSocket(Map<String, String> conf, String socket) {
    Map<String, String> m = new java.util.HashMap<>(conf);
    m.put(SpindleConfig.FEED_SOCKET.key(), socket);
    return m;
  }

  /** The run failed: which ranks, how, and their last output lines. */
  public static final class TrainFailure extends IllegalStateException {
    TrainFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
