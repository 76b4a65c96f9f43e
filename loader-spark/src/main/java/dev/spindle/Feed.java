package dev.spindle;

import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.feed.FeedJob;
import dev.spindle.spark.feed.FeedRequest;
import dev.spindle.spark.feed.FeedResult;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.train.PythonClient;
import dev.spindle.spark.train.TrainJob;
import dev.spindle.spark.train.TrainSettings;
import java.io.IOException;
import java.time.Duration;
import org.apache.spark.sql.SparkSession;

/**
 * Builds and runs one {@code feed} run: plans every epoch on the driver (refused before any task
 * when a rank would get no batch), runs the plans on Spark and delivers every rank's batches
 * exactly once, in plan order, either to the in-JVM consumer that checks and counts them or, with
 * {@link #serve()}, to each rank's PyTorch trainer through the trainer bridge of its executor.
 *
 * <pre>{@code
 * FeedReport report = Spindle.feed(spark)
 *     .input("hdfs:///data/shards")                     // input
 *     .worldSize(4).batchSize(64).seed(7)               // plan
 *     .epochs(2)                                        // epochs 0 and 1
 *     .serve().socket("/tmp/spindle-{user}/bridge.sock") // or leave out: check and count
 *     .run();
 * }</pre>
 *
 * <p>Settings not given here come from the session's {@code spark.spindle.*} configuration, then
 * the keys' defaults; those given here apply to this run only. One thread uses a builder; a session
 * runs one feed at a time.
 */
public final class Feed extends ImageJob<Feed> {
  private String manifest;
  private Integer worldSize;
  private int epochs = 1;
  private LoaderState resume;
  private int stopAfterBatches;

  Feed(SparkSession spark) {
    super(spark);
  }

  /**
   * Where the shard list and counts are cached (default: {@code _spindle_manifest.json} in the
   * input); not used for a {@code preprocess} output, whose {@code _manifest.json} lists them.
   */
  public Feed manifest(String file) {
    this.manifest = Uris.require("manifest", file);
    return this;
  }

  /**
   * Adds a source of a weighted mixture, instead of {@link #input}: {@code mix("web", 0.7,
   * "s3a://b/web").mix("books", 0.3, "hdfs:///books")} draws every epoch's batches 70/30 from the
   * two ({@code spark.spindle.mix}; proportions are normalised by their sum). The epoch's length is
   * {@link #mixEpoch}'s.
   *
   * @throws IllegalArgumentException for a bad name, proportion or URI, or a name used twice
   */
  public Feed mix(String name, double proportion, String uri) {
    String entry =
        name + "=" + java.math.BigDecimal.valueOf(proportion).toPlainString() + ":" + uri;
    String before = settings.merged().getOrDefault(SpindleConfig.MIX.key(), "");
    return with(SpindleConfig.MIX, before.isBlank() ? entry : before + ";" + entry);
  }

  /**
   * Samples in one epoch of a mixture ({@code spark.spindle.mix.epoch}): {@code total} (default),
   * {@code samples:N}, {@code first-exhausted} or {@code all-exhausted}.
   */
  public Feed mixEpoch(String rule) {
    return with(SpindleConfig.MIX_EPOCH, rule);
  }

  /** Trainer ranks; every rank gets the same number of batches per epoch. */
  public Feed worldSize(int ranks) {
    if (ranks < 1) {
      throw new IllegalArgumentException(
          "Invalid worldSize: " + ranks + " (must be an integer > 0)");
    }
    this.worldSize = ranks;
    return this;
  }

  /** Seed of the epoch plans, as {@code spark.spindle.seed}. */
  public Feed seed(long seed) {
    return with(SpindleConfig.SEED, seed);
  }

  /**
   * What to do with samples that fill no whole round: DROP_LAST, PAD or EXACT ({@code
   * spark.spindle.feed.remainder}).
   */
  public Feed remainder(String policy) {
    return with(SpindleConfig.FEED_REMAINDER, policy);
  }

  /**
   * Packs batches to at most {@code tokens} tokens of the one declared {@code list<...>} field's
   * lengths, the batch size being the most rows a batch holds ({@code spark.spindle.batchTokens};
   * 0: batches of batch size samples).
   */
  public Feed batchTokens(int tokens) {
    return with(SpindleConfig.BATCH_TOKENS, tokens);
  }

  /**
   * {@link #batchTokens(int)} counting the lengths of the declared list field {@code field} ({@code
   * spark.spindle.batchTokens.field}).
   */
  public Feed batchTokens(String field, int tokens) {
    with(SpindleConfig.BATCH_TOKENS_FIELD, field);
    return with(SpindleConfig.BATCH_TOKENS, tokens);
  }

  /**
   * Spark partitions per epoch, as {@code spark.spindle.feed.partitions}; not with {@link
   * #serve()}.
   */
  public Feed partitions(int partitions) {
    return with(SpindleConfig.FEED_PARTITIONS, partitions);
  }

  /** Run until epochs {@code 0 .. epochs-1} are complete (default 1). */
  public Feed epochs(int epochs) {
    if (epochs < 1) {
      throw new IllegalArgumentException("Invalid epochs: " + epochs + " (must be an integer > 0)");
    }
    this.epochs = epochs;
    return this;
  }

  /**
   * Continue from a loader state ({@link FeedReport#loaderState()}), delivering only what is left.
   */
  public Feed resume(String loaderStateJson) {
    this.resume = LoaderState.fromJson(loaderStateJson);
    return this;
  }

  /**
   * Stop once every rank got this many batches in this run (0 = never); resume from the report's
   * state.
   */
  public Feed stopAfterBatches(int batches) {
    if (batches < 0) {
      throw new IllegalArgumentException(
          "Invalid stopAfterBatches: " + batches + " (must be an integer >= 0)");
    }
    this.stopAfterBatches = batches;
    return this;
  }

  /**
   * Serve PyTorch trainers ({@code spark.spindle.feed.serve}): one task per rank streams the rank's
   * batches into a feeder of its executor, which the rank's trainer leases through the trainer
   * bridge. Without it, batches go to the in-JVM consumer that checks and counts them.
   */
  public Feed serve() {
    return with(SpindleConfig.FEED_SERVE, true);
  }

  /** When serving: the feeder device, auto, cuda or host ({@code spark.spindle.feed.device}). */
  public Feed device(String device) {
    return with(SpindleConfig.FEED_DEVICE, device);
  }

  /**
   * When serving: the bridge socket path; may hold {user} and {rank} ({@code
   * spark.spindle.feed.socket}).
   */
  public Feed socket(String path) {
    return with(SpindleConfig.FEED_SOCKET, path);
  }

  /**
   * When serving: how long a rank task waits for its trainer ({@code
   * spark.spindle.feed.trainerTimeoutSeconds}).
   */
  public Feed trainerTimeout(Duration timeout) {
    return with(SpindleConfig.FEED_TRAINER_TIMEOUT, timeout.toSeconds());
  }

  /**
   * For {@link #train}: the Python interpreter of the training scripts ({@code
   * spark.spindle.train.python}).
   */
  public Feed python(String executable) {
    return with(SpindleConfig.TRAIN_PYTHON, executable);
  }

  /**
   * For {@link #train}: a Hadoop URI every node can use, where each rank's loader state outlives
   * its trainer ({@code spark.spindle.train.stateDir}; needed on a cluster master).
   */
  public Feed stateDir(String uri) {
    return with(SpindleConfig.TRAIN_STATE_DIR, uri);
  }

  /** For {@link #train}: restarts after trainers fail ({@code spark.spindle.train.maxRestarts}). */
  public Feed maxRestarts(int restarts) {
    return with(SpindleConfig.TRAIN_MAX_RESTARTS, restarts);
  }

  /**
   * For {@link #train}: the most ranks one executor may run ({@code
   * spark.spindle.train.nprocPerExecutor}).
   */
  public Feed nprocPerExecutor(int ranks) {
    return with(SpindleConfig.TRAIN_NPROC_PER_EXECUTOR, ranks);
  }

  /**
   * Trains: runs the epochs as {@link #serve()} does and, inside each rank's task, starts {@code
   * script} (with {@code args}) on the executor's node with torchrun's environment ({@code RANK},
   * {@code LOCAL_RANK}, {@code WORLD_SIZE}, {@code LOCAL_WORLD_SIZE}, {@code MASTER_ADDR}, {@code
   * MASTER_PORT}) and the loader's ({@code SPINDLE_SOCKET}, the run token, device, state), so that
   * {@code SpindleLoader.from_env()} and {@code init_process_group()} work in it. A trainer that
   * fails restarts every rank from the latest step every rank has a checkpoint of ({@code
   * spindle_bridge.checkpoint}), else from the run's start; one that fails before it connects is
   * not restarted; see the README's "Training from Spark".
   *
   * @throws IllegalArgumentException before any Spark work, as {@link #run()}, or if the script is
   *     not a file (on a local master)
   * @throws RuntimeException when the run fails: the failing ranks, how, and their last lines
   */
  public FeedReport train(String script, String... args) throws IOException {
    settings.set(SpindleConfig.FEED_SERVE, true);
    Settings conf = checkedConf();
    requirePlan("train", "train(script)", conf);
    java.nio.file.Path file = java.nio.file.Path.of(script).toAbsolutePath().normalize();
    if (spark.sparkContext().master().startsWith("local")
        && !java.nio.file.Files.isRegularFile(file)) {
      throw new IllegalArgumentException("Training script not found: " + file);
    }
    TrainSettings train =
        new TrainSettings(
            conf.get(SpindleConfig.TRAIN_PYTHON),
            file.toString(),
            java.util.List.of(args),
            PythonClient.dir().toString(),
            conf.get(SpindleConfig.TRAIN_NPROC_PER_EXECUTOR),
            conf.get(SpindleConfig.TRAIN_MAX_RESTARTS));
    FeedResult result =
        TrainJob.run(
            spark,
            new FeedRequest(inputOf(conf), manifest, worldSize, epochs, resume, 0, conf),
            train);
    return new FeedReport(result.report(), result.state().toJson());
  }

  /**
   * Runs every epoch on the calling thread and returns the report, which the caller owns.
   *
   * @throws IllegalArgumentException before any Spark work, for missing input or world size, a
   *     setting that is not allowed, serving settings without {@link #serve()}, or a plan that
   *     cannot give every rank a batch
   * @throws IOException when the input cannot be listed or the manifest cache not written
   * @throws RuntimeException when the run fails (a task, the failure budget)
   */
  public FeedReport run() throws IOException {
    Settings conf = checkedConf();
    requirePlan("feed", "run()", conf);
    ServeCheck.check(conf, settings);
    FeedResult result =
        FeedJob.run(
            spark,
            new FeedRequest(
                inputOf(conf), manifest, worldSize, epochs, resume, stopAfterBatches, conf));
    return new FeedReport(result.report(), result.state().toJson());
  }

  /** The input, or for a mixture its entries as the report's {@code input} shows them. */
  private String inputOf(Settings conf) {
    String mix = conf.get(SpindleConfig.MIX);
    return mix.isEmpty() ? input : "mix:" + mix;
  }

  /**
   * Refuses a run without input (or mixture), with both, or without world size, naming {@code job}
   * and the {@code call}.
   */
  private void requirePlan(String job, String call, Settings conf) {
    boolean mixed = !conf.get(SpindleConfig.MIX).isEmpty();
    if (mixed && input != null) {
      throw new IllegalArgumentException(
          job
              + " reads either one input or a mixture (spark.spindle.mix, --mix), not both: input "
              + input
              + ", mixture "
              + conf.get(SpindleConfig.MIX));
    }
    if (!mixed) {
      Uris.present("input", input, job);
    }
    if (worldSize == null) {
      throw new IllegalArgumentException(job + " needs worldSize(...) before " + call);
    }
  }
}
