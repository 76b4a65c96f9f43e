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
import java.util.Comparator;
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
 * When a trainer fails (exits with an error, is killed), every rank is restarted in a new stage
 * from one {@link RestartPoint}: the latest step every rank has a checkpoint of, else the run's
 * start (said loudly: the trainers start with fresh models), up to {@code
 * spark.spindle.train.maxRestarts} times; a trainer that fails before it connects, one that hangs,
 * or any other failure ends the job with the failing ranks' own account, their last output lines
 * and the state directory. Driver thread.
 */
public final class TrainJob {
  private static final Logger LOG = LoggerFactory.getLogger(TrainJob.class);
  private static final ClassTag<TrainRankResult> RESULT =
      ClassTag$.MODULE$.apply(TrainRankResult.class);

  private static final long EXIT_WAIT_MS = 30_000;

  /** Trainer lines the driver repeats for a rank that failed in another JVM (not echoed here). */
  private static final int TAIL_SHOWN = 10;

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
    say(
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
            + "; loader states and checkpoint records in "
            + store.location());
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
            ProgressCounters.register(jsc.sc()),
            0,
            RestartPoint.runStart(world, null));
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
      Attempts run = new Attempts(jsc, world, task, store, train, report, inputs.value(), label);
      report.finished(run.all());
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

  /** A line for the user: on the console once (the log has it at DEBUG). */
  private static void say(String line) {
    System.out.println(line);
    LOG.debug(line);
  }

  /** The attempts of one run: the stage, run again from a restart point after trainers fail. */
  private static final class Attempts {
    private final JavaSparkContext jsc;
    private final int world;
    private final TrainTask task;
    private final TrainStateStore store;
    private final TrainSettings train;
    private final TrainReport report;
    private final RankStart.Legs legs;
    private final JobLabel label;

    Attempts(
        JavaSparkContext jsc,
        int world,
        TrainTask task,
        TrainStateStore store,
        TrainSettings train,
        TrainReport report,
        TrainInputs in,
        JobLabel label) {
      this.jsc = jsc;
      this.world = world;
      this.task = task;
      this.store = store;
      this.train = train;
      this.report = report;
      this.legs = new RankStart.Legs(in, world);
      this.label = label;
    }

    /**
     * Runs the stage until every rank finished, restarting it after trainers' failures while
     * restarts are left; the final error names the state directory.
     */
    List<TrainRankResult> all() throws IOException {
      try {
        return attempts();
      } catch (TrainFailure e) {
        throw e;
      } catch (RuntimeException | IOException e) {
        TrainFailure f = new TrainFailure(rootMessage(e) + "\n" + stateNote(store));
        f.addSuppressed(e);
        throw f;
      }
    }

    private List<TrainRankResult> attempts() throws IOException {
      RestartPoint point = RestartPoint.choose(store, legs, world);
      if (point.fromCheckpoints() || point.why() != null) {
        say("spindle train: states of an earlier run in " + store.location() + ": " + where(point));
      }
      for (int attempt = 0; ; attempt++) {
        store.clearExits(world);
        begin(attempt, point);
        Exception sparkFailure = null;
        List<TrainerExit> exits;
        try {
          List<TrainRankResult> results = stage(task.forAttempt(attempt, point));
          exits = results.stream().map(TrainRankResult::exit).toList();
          if (exits.stream().allMatch(x -> x.kind().equals("ok"))) {
            report.lineage(spans(point, null));
            return results;
          }
        } catch (Exception e) { // collect() throws SparkException, a checked one, undeclared
          LOG.debug("Attempt {} of the train run failed", attempt, e);
          sparkFailure = e;
          exits = awaitExits(store, world);
        }
        List<TrainerExit> causes =
            exits.stream()
                .filter(TrainerExit::cause)
                .sorted(Comparator.comparingLong(TrainerExit::endedAtMs))
                .toList();
        if (causes.isEmpty()) { // no rank failed on its own account: Spark's error says why
          throw new TrainFailure(
              (sparkFailure == null
                      ? "ranks " + exits + " stopped without a failure of their own"
                      : rootMessage(sparkFailure))
                  + "\n"
                  + stateNote(store),
              sparkFailure);
        }
        report.failedAttempt(exits, spans(point, store));
        boolean restartable = causes.get(0).restartable(); // later ones may follow from it
        if (!restartable || attempt >= train.maxRestarts()) {
          throw new TrainFailure(message(causes, attempt, restartable), sparkFailure);
        }
        point = RestartPoint.choose(store, legs, world);
        restarting(causes, attempt, point);
      }
    }

    /** Every rank's state in the store is the point's: what the attempt delivers counts from it. */
    private void begin(int attempt, RestartPoint point) throws IOException {
      long batches = 0;
      for (int r = 0; r < world; r++) {
        RankStart s = RankStart.of(r, legs, point.ranks().get(r).state());
        store.saveState(r, s.trainerState());
        batches +=
            legs.between(r, legs.start(r), legs.at(r, point.ranks().get(r).state())).batches();
      }
      report.attemptStarted(attempt, point, legs.at(0, point.ranks().get(0).state()));
      if (attempt > 0 || batches > 0) {
        label.continuing(batches * legs.first().spec().batchSize());
      }
    }

    /**
     * Per rank, the batches from the point to where its trainer got ({@code store}'s states; null:
     * to the run's end), and the batches before the point.
     */
    private RankStart.Span[] spans(RestartPoint point, TrainStateStore store) throws IOException {
      long batches = 0;
      long real = 0;
      long before = 0;
      long beforeReal = 0;
      for (int r = 0; r < world; r++) {
        RankStart.Point from = legs.at(r, point.ranks().get(r).state());
        RankStart.Point to = store == null ? legs.end(r) : legs.at(r, store.state(r).orElse(null));
        RankStart.Span s = legs.between(r, from, to);
        RankStart.Span p = legs.between(r, legs.start(r), from);
        batches += s.batches();
        real += s.realSamples();
        before += p.batches();
        beforeReal += p.realSamples();
      }
      return new RankStart.Span[] {
        new RankStart.Span(batches, real), new RankStart.Span(before, beforeReal)
      };
    }

    private List<TrainRankResult> stage(TrainTask attemptTask) {
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
                        .mapPartitions(attemptTask, false, RESULT),
                    RESULT)
                .collect();
        report.timeline(
            recorder.tasks(
                world,
                TaskTimeline.WAIT_MS,
                p -> p < results.size() ? results.get(p).timelineCounts() : null));
        return results;
      }
    }

    /**
     * One line for the restart: the first failure, where every rank restarts; the failed trainer's
     * last lines before it when they ran in another JVM (here they were printed as they came).
     */
    private void restarting(List<TrainerExit> causes, int attempt, RestartPoint point) {
      TrainerExit first = causes.get(0);
      if (!"driver".equals(first.executor())) {
        List<String> lines = first.tail().lines().toList();
        lines
            .subList(Math.max(0, lines.size() - TAIL_SHOWN), lines.size())
            .forEach(l -> System.out.println("[rank " + first.rank() + "] " + l));
      }
      say(
          "spindle train: rank "
              + first.rank()
              + " failed ("
              + first.message()
              + (causes.size() > 1 ? "; " + (causes.size() - 1) + " more rank(s) failed" : "")
              + "); restart "
              + (attempt + 1)
              + " of at most "
              + train.maxRestarts()
              + ": "
              + where(point));
    }

    /** Where every rank starts, in words; a start from scratch says why, as a warning. */
    private String where(RestartPoint point) {
      RankStart.Point at = legs.at(0, point.ranks().get(0).state());
      String place = "epoch " + at.epoch() + ", batch " + at.batch();
      if (point.fromCheckpoints()) {
        return "every rank resumes from its checkpoint at step "
            + point.step()
            + " of the run ("
            + place
            + ")";
      }
      return "WARNING: every rank restarts from the run's start ("
          + place
          + ") with a fresh model, because "
          + point.why()
          + ": the batches trained before are trained again, so that the model sees each once";
    }

    /**
     * The run's error (the command line prints it after {@code spindle train failed: }): each
     * failed rank's account and last lines, whether restarts were left, the state directory.
     */
    private String message(List<TrainerExit> causes, int attempt, boolean restartable) {
      StringBuilder m = new StringBuilder();
      causes.forEach(c -> m.append(m.length() == 0 ? "" : "\n").append(c.describe()));
      if (restartable) {
        m.append("\nNo restart left: ")
            .append(attempt)
            .append(" made (spark.spindle.train.maxRestarts=")
            .append(train.maxRestarts())
            .append(").");
      }
      return m.append('\n').append(stateNote(store)).toString();
    }
  }

  /** The sentence every failed run ends with: where its states are, and how to resume. */
  static String stateNote(TrainStateStore store) {
    return "The ranks' checkpoint records and loader states are kept in "
        + store.location()
        + " (spark.spindle.train.stateDir): the same command with --state-dir "
        + store.location()
        + " restarts every rank from the latest step every rank has a checkpoint of, or from the"
        + " run's start without one.";
  }

  /** The deepest message in {@code e}'s causes: Spark wraps the one that says what happened. */
  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t && t.getCause().getMessage() != null) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
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
      if (!master.startsWith("local")) {
        throw new IllegalArgumentException(
            "train on master "
                + master
                + " needs --state-dir"
                + " (spark.spindle.train.stateDir): a directory every node can read and write"
                + " (hdfs://, s3a://, a shared mount), where each rank's checkpoint record and"
                + " loader state outlive its trainer");
      }
      dir = Files.createTempDirectory("spindle-train-").toUri().toString();
    }
    return new TrainStateStore(dir, new HadoopConf(jsc.hadoopConfiguration()));
  }

  private static Map<String, String> withSocket(Map<String, String> conf, String socket) {
    Map<String, String> m = new java.util.HashMap<>(conf);
    m.put(SpindleConfig.FEED_SOCKET.key(), socket);
    return m;
  }

  /**
   * The run failed: which ranks, how, their last output lines and the state directory. It has no
   * cause (its message says it all, and Spark's exception, when there is one, is kept as a
   * suppressed exception and in the log at DEBUG), so the command line prints it whole.
   */
  public static final class TrainFailure extends IllegalStateException {
    TrainFailure(String message) {
      super(message);
    }

    TrainFailure(String message, Throwable suppressed) {
      super(message);
      if (suppressed != null) {
        addSuppressed(suppressed);
      }
    }
  }
}
