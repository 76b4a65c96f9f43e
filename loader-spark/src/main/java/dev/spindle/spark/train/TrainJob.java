package dev.spindle.spark.train;

import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.feed.FeedJob;
import dev.spindle.spark.feed.FeedRequest;
import dev.spindle.spark.feed.FeedResult;
import dev.spindle.spark.feed.MixedInput;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestCache;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.progress.JobLabel;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.serve.ExecutorServing;
import dev.spindle.spark.serve.FeedSettings;
import dev.spindle.spark.serve.ServeSettings;
import dev.spindle.spark.serve.ServeStage;
import dev.spindle.spark.shard.HadoopConf;
import java.io.IOException;
import java.nio.file.Files;
import java.util.UUID;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code train}: one barrier stage of {@code world} tasks, task {@code r} starting rank {@code r}'s
 * training script beside its executor and serving it every epoch of the run ({@link TrainTask}).
 * When a trainer fails (exits with an error, is killed), every rank is restarted in a new stage
 * ({@link TrainAttempts}) from one {@link RestartPoint}: the latest step every rank has a
 * checkpoint of, else the run's start (said loudly: the trainers start with fresh models), up to
 * {@code spark.spindle.train.maxRestarts} times; a trainer that fails before it connects, one that
 * hangs, or any other failure ends the job with the failing ranks' own account, their last output
 * lines and the state directory. Driver thread.
 */
public final class TrainJob {
  private static final Logger LOG = LoggerFactory.getLogger(TrainJob.class);

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
    Settings conf = request.settings();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    int world = request.worldSize();
    ServeStage.requireSlots(jsc, world, "train");
    ExecutorServing.closeOnStop(jsc.sc());
    MixedInput mix = FeedJob.loadMixture(jsc, request);
    ManifestCache.Loaded loaded = mix != null ? mix.loaded() : FeedJob.loadManifest(jsc, request);
    Manifest manifest = loaded.manifest();
    FeedSettings settings = FeedSettings.from(conf, manifest).withIndexes(loaded.indexes());
    LoaderState start =
        FeedJob.startState(jsc, manifest, mix == null ? null : mix.mixture(), request, settings);
    if (start.epoch() >= request.epochs()) {
      throw new IllegalArgumentException(
          "Nothing to do: the state is at epoch "
              + start.epoch()
              + " and --epochs is "
              + request.epochs());
    }
    String runId = UUID.randomUUID().toString();
    HadoopConf hadoop = HadoopConf.of(jsc.sc()); // one object: the task carries it once
    TrainStateStore store = store(jsc, conf, hadoop);
    ServeSettings serve =
        ServeSettings.from(
            conf.isSet(SpindleConfig.FEED_SOCKET)
                ? conf
                : conf.withValue(SpindleConfig.FEED_SOCKET, TRAIN_SOCKET));
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
        jsc.broadcast(TrainInputs.of(manifest, start, request.epochs()));
    TrainTask task =
        new TrainTask(
            inputs,
            settings,
            hadoop,
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
      if (!settings.hasImage()) {
        label.withoutImages();
      }
      TrainAttempts run =
          new TrainAttempts(jsc, world, task, store, train, report, inputs.value(), label);
      report.finished(run.all());
      if (conf.get(SpindleConfig.TRAIN_STATE_DIR).isEmpty()) {
        store.delete(); // its own temporary directory: nothing to resume from a finished run
      }
    } finally {
      jsc.setLocalProperty("spark.job.interruptOnCancel", null);
      inputs.destroy();
    }
    LoaderState end =
        LoaderState.initial(manifest, start.spec().withEpoch(request.epochs()), start.mixture());
    JobReport built =
        report.build(end, (System.nanoTime() - startNanos) / 1e9).put("master", jsc.master());
    if (mix != null) {
      // a run that ends here finished every planned batch from its start state on
      built.put(
          "mix",
          mix.report(
              mix.plannedBySource(start.resume(manifest, world), manifest, request.epochs())));
    }
    return new FeedResult(built, end);
  }

  /** Rows the run delivers: the rest of the first epoch, then whole epochs up to {@code epochs}. */
  private static long rows(EpochPlan first, int epochs) {
    long batches = 0;
    long rest = 0;
    long whole = 0;
    for (int r = 0; r < first.worldSize(); r++) {
      RankPlan rank = first.rank(r);
      batches += first.batchesPerRank() - rank.firstBatch();
      rest += rank.rows(rank.firstBatch(), rank.batches());
      whole += rank.rows(0, rank.batches());
    }
    if (first.spec().budget() != null) { // later epochs pack about as many rows as this one
      return rest + (long) (epochs - first.epoch() - 1) * whole;
    }
    batches += (long) (epochs - first.epoch() - 1) * first.batchesPerRank() * first.worldSize();
    return batches * first.spec().batchSize();
  }

  /** A line for the user: on the console once (the log has it at DEBUG). */
  static void say(String line) {
    System.out.println(line);
    LOG.debug(line);
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

  /** The run's state store: the configured directory, else a new local one (local masters). */
  private static TrainStateStore store(JavaSparkContext jsc, Settings conf, HadoopConf hadoop)
      throws IOException {
    String dir = conf.get(SpindleConfig.TRAIN_STATE_DIR);
    if (dir.isEmpty()) {
      String master = jsc.master();
      if (needsStateDir(master)) {
        throw new IllegalArgumentException(stateDirRequired(master));
      }
      dir = Files.createTempDirectory("spindle-train-").toUri().toString();
    }
    return new TrainStateStore(dir, hadoop);
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
        + " (hdfs://, s3a://, a shared mount), where each rank's checkpoint record and loader"
        + " state outlive its trainer";
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
