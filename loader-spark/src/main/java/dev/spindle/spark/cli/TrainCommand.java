package dev.spindle.spark.cli;

import dev.spindle.Feed;
import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.progress.ProgressPrinter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code train}: {@link Feed#train} on a session of its own, or, through {@link
 * #run(SparkSession, String[])}, on one the caller owns. Everything after the script (or after
 * {@code --}) is the script's. Main thread.
 */
@Command(name = "train",
    header = "Launch a PyTorch training script per rank beside the executors and feed it.",
    mixinStandardHelpOptions = true, resourceBundle = KeyDefaults.NAME, sortOptions = false,
    customSynopsis = "spindle train --input URI --world-size W [OPTIONS] -- SCRIPT.py [ARGS...]",
    description = {"Runs the epochs as feed --serve does (a barrier stage, one task per rank) and"
        + " in each rank's task starts SCRIPT.py on the executor's node with torchrun's"
        + " environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT)"
        + " and the loader's (SPINDLE_SOCKET, SPINDLE_RUN_TOKEN, SPINDLE_DEVICE, SPINDLE_STATE,"
        + " SPINDLE_STATE_OUT, SPINDLE_EPOCHS): SpindleLoader.from_env() and"
        + " init_process_group() work in it. A trainer that fails restarts every rank from its"
        + " saved loader state; one that hangs is killed."})
public final class TrainCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--input", required = true, paramLabel = "URI",
      description = "Shards or a preprocess output folder, as for feed")
  String input;

  @Option(names = "--world-size", required = true, paramLabel = "W",
      converter = Converters.PositiveInt.class, description = "Trainer ranks")
  int worldSize;

  @Option(names = "--epochs", paramLabel = "E", converter = Converters.PositiveInt.class,
      description = "Train until epochs 0..E-1 are complete (default ${DEFAULT-VALUE})")
  int epochs = 1;

  @Option(names = "--seed", paramLabel = "S",
      description = "Seed of the epoch plans (spark.spindle.seed)")
  String seed;

  @Mixin ImageFlags image;

  @Option(names = "--remainder", paramLabel = "POLICY",
      description = "DROP_LAST, PAD or EXACT (spark.spindle.feed.remainder; default"
          + " ${bundle:spark.spindle.feed.remainder})")
  String remainder;

  @Option(names = "--manifest", paramLabel = "FILE",
      description = "Where the shard list and counts are cached")
  String manifest;

  @Option(names = "--resume", paramLabel = "STATE.json",
      description = "Start from this loader state")
  Path resume;

  @Option(names = "--nproc-per-executor", paramLabel = "K",
      description = "The most ranks one executor may run; fails before any trainer starts if"
          + " Spark placed more (spark.spindle.train.nprocPerExecutor; 0, the default: no limit)")
  String nprocPerExecutor;

  @Option(names = "--python", paramLabel = "EXE",
      description = "The trainers' Python (spark.spindle.train.python; default"
          + " ${bundle:spark.spindle.train.python})")
  String python;

  @Option(names = "--state-dir", paramLabel = "URI",
      description = "Where each rank's loader state outlives its trainer; needed on a cluster"
          + " (spark.spindle.train.stateDir; default: a local temporary directory)")
  String stateDir;

  @Option(names = "--max-restarts", paramLabel = "N",
      description = "Restarts after trainers fail (spark.spindle.train.maxRestarts; default"
          + " ${bundle:spark.spindle.train.maxRestarts})")
  String maxRestarts;

  @Option(names = "--device", paramLabel = "auto|host|cuda",
      description = "The feeders' device (spark.spindle.feed.device; default"
          + " ${bundle:spark.spindle.feed.device})")
  String device;

  @Option(names = "--socket", paramLabel = "PATH",
      description = "The bridge socket; may hold {user}, {rank}, {pid} (spark.spindle.feed.socket;"
          + " default for train: one per executor JVM, " + "/tmp/spindle-{user}/train-{pid}.sock)")
  String socket;

  @Option(names = "--trainer-timeout", paramLabel = "SECONDS",
      description = "How long a rank waits for its trainer to say hello, take a batch, finish;"
          + " a trainer past it is killed (spark.spindle.feed.trainerTimeoutSeconds; default"
          + " ${bundle:spark.spindle.feed.trainerTimeoutSeconds})")
  String trainerTimeout;

  @Parameters(paramLabel = "SCRIPT.py [ARGS]", arity = "1..*",
      description = "The training script and its arguments")
  List<String> command;

  /** The state {@code --resume} read, for the summary. */
  private LoaderState resumed;

  @Mixin ColumnFlags columns;
  @Mixin ProgressFlags progress;
  @Mixin ReportOption report;
  @Mixin SparkOptions spark;

  /** Runs {@code argv} (the flags after {@code train}) on {@code session}, which stays open. */
  public static FeedReport run(SparkSession session, String[] argv) throws IOException {
    TrainCommand command = new TrainCommand();
    CommandLine cl = new CommandLine(command).setStopAtPositional(true);
    cl.parseArgs(argv);
    return command.runOn(session, command.settings(cl), true);
  }

  @Override
  public Integer call() throws IOException {
    CommandLine cl = spec.commandLine();
    Map<String, String> settings = settings(cl);
    SparkSession session = Jobs.session(cl, "train", spark, progress.with(settings));
    try {
      FeedReport r;
      try (ProgressPrinter shown = progress.start(session)) {
        r = runOn(session, settings, false);
      }
      Jobs.summary(cl, r.fields(), report, StateNotes.of(resumed, resume, 0, null, r.fields(),
          LoaderState.fromJson(r.loaderState())));
      return 0;
    } finally {
      session.stop();
    }
  }

  private Map<String, String> settings(CommandLine cl) throws IOException {
    JobConf conf = JobConf.of(spark, cl);
    conf.flag("--seed", seed, SpindleConfig.SEED.key());
    image.putInto(conf);
    conf.flag("--remainder", remainder, SpindleConfig.FEED_REMAINDER.key());
    conf.flag("--nproc-per-executor", nprocPerExecutor,
        SpindleConfig.TRAIN_NPROC_PER_EXECUTOR.key());
    conf.flag("--python", python, SpindleConfig.TRAIN_PYTHON.key());
    conf.flag("--state-dir", stateDir, SpindleConfig.TRAIN_STATE_DIR.key());
    conf.flag("--max-restarts", maxRestarts, SpindleConfig.TRAIN_MAX_RESTARTS.key());
    conf.flag("--device", device, SpindleConfig.FEED_DEVICE.key());
    conf.flag("--socket", socket, SpindleConfig.FEED_SOCKET.key());
    conf.flag("--trainer-timeout", trainerTimeout, SpindleConfig.FEED_TRAINER_TIMEOUT.key());
    columns.putInto(conf);
    if (!Files.isRegularFile(Path.of(command.get(0)))) {
      throw new CommandLine.ParameterException(cl, "Training script not found: "
          + Path.of(command.get(0)).toAbsolutePath());
    }
    return conf.checked(cl);
  }

  private FeedReport runOn(SparkSession session, Map<String, String> settings, boolean perRun)
      throws IOException {
    Feed feed = Spindle.feed(session).input(input).worldSize(worldSize).epochs(epochs);
    if (perRun) {
      settings.forEach((k, v) -> {
        if (k.startsWith("spark.spindle.")) {
          feed.set(k, v);
        }
      });
    }
    if (manifest != null) {
      feed.manifest(manifest);
    }
    if (resume != null) {
      String state = Files.readString(resume);
      resumed = LoaderState.fromJson(state);
      feed.resume(state);
    }
    FeedReport r = feed.train(command.get(0), command.subList(1, command.size())
        .toArray(new String[0]));
    report.write(r);
    return r;
  }
}
