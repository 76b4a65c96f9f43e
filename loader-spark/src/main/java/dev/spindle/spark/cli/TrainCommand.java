package dev.spindle.spark.cli;

import dev.spindle.Feed;
import dev.spindle.FeedReport;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.train.PythonClient;
import dev.spindle.spark.train.TrainJob;
import dev.spindle.spark.train.WarmTrainers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code train}: {@link Feed#train} on a session of its own, or, through {@link #run(SparkSession,
 * String[])}, on one the caller owns. Everything after the script (or after {@code --}) is the
 * script's. Main thread.
 */
@Command(
    name = "train",
    header = "Launch a PyTorch training script per rank beside the executors and feed it.",
    mixinStandardHelpOptions = true,
    resourceBundle = KeyDefaults.NAME,
    sortOptions = false,
    customSynopsis = "spindle train --input URI --world-size W [OPTIONS] -- SCRIPT.py [ARGS...]",
    description = {
      "Runs the epochs as feed --serve does (a barrier stage, one task per rank) and"
          + " in each rank's task starts SCRIPT.py on the executor's node with torchrun's"
          + " environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT)"
          + " and the loader's (SPINDLE_SOCKET, SPINDLE_RUN_TOKEN, SPINDLE_DEVICE, SPINDLE_STATE,"
          + " SPINDLE_STATE_OUT, SPINDLE_EPOCHS): SpindleLoader.from_env() and"
          + " init_process_group() work in it. A trainer that fails restarts every rank from the"
          + " latest step every rank has a checkpoint of (spindle_bridge.checkpoint), else from the"
          + " run's start; one that fails before it connects is not restarted; one that hangs is"
          + " killed. On local masters --python must import torch and spindle_bridge (checked"
          + " first)."
    })
public final class TrainCommand extends FeedRunCommand<TrainCommand.Flags> {
  /** The flags only {@code train} takes, and the script with its arguments. */
  static final class Flags {
    @Option(
        names = "--nproc-per-executor",
        paramLabel = "K",
        description =
            "The most ranks one executor may run; fails before any trainer starts if"
                + " Spark placed more (spark.spindle.train.nprocPerExecutor; 0, the default: no"
                + " limit)")
    String nprocPerExecutor;

    @Option(
        names = "--python",
        paramLabel = "EXE",
        description =
            "The trainers' Python (spark.spindle.train.python; default"
                + " ${bundle:spark.spindle.train.python})")
    String python;

    @Option(
        names = "--state-dir",
        paramLabel = "URI",
        description =
            "Where each rank's loader state outlives its trainer; needed on a cluster"
                + " (spark.spindle.train.stateDir; default: a local temporary directory)")
    String stateDir;

    @Option(
        names = "--max-restarts",
        paramLabel = "N",
        description =
            "Restarts after trainers fail (spark.spindle.train.maxRestarts; default"
                + " ${bundle:spark.spindle.train.maxRestarts})")
    String maxRestarts;

    @Mixin BridgeFlags bridge;

    @Parameters(
        paramLabel = "SCRIPT.py [ARGS]",
        arity = "1..*",
        description = "The training script and its arguments")
    List<String> command;
  }

  /** The master of the caller's session ({@link #run(SparkSession, String[])}), else null. */
  private String sessionMaster;

  private PythonClient.ImportCheck pythonCheck;
  private CommandLine pythonCheckLine;

  public TrainCommand() {
    super(new Flags());
  }

  /** Runs {@code argv} (the flags after {@code train}) on {@code session}, which stays open. */
  public static FeedReport run(SparkSession session, String[] argv) throws IOException {
    TrainCommand command = new TrainCommand();
    command.sessionMaster = session.sparkContext().master();
    return run(command, new CommandLine(command).setStopAtPositional(true), session, argv);
  }

  @Override
  void putInto(JobConf conf, CommandLine cl) {
    conf.flag(
        "--nproc-per-executor", own.nprocPerExecutor, SpindleConfig.TRAIN_NPROC_PER_EXECUTOR.key());
    conf.flag("--python", own.python, SpindleConfig.TRAIN_PYTHON.key());
    conf.flag("--state-dir", own.stateDir, SpindleConfig.TRAIN_STATE_DIR.key());
    conf.flag("--max-restarts", own.maxRestarts, SpindleConfig.TRAIN_MAX_RESTARTS.key());
    own.bridge.putInto(conf);
    Path script = Path.of(own.command.get(0));
    if (!Files.isRegularFile(script)) {
      throw new ParameterException(cl, "Training script not found: " + script.toAbsolutePath());
    }
    requirePython(conf, cl);
  }

  /**
   * Where the executors run on this machine, starts checking that the trainers' Python imports
   * torch and the client; {@link #execute} waits for the verdict before the run's first Spark job,
   * so a Python that cannot is refused as a usage error instead of as every rank's failure, and the
   * check overlaps Spark's start. On a local master the checked interpreters are the ranks' own
   * ({@link WarmTrainers}): their {@code import torch} overlaps Spark's start too.
   */
  private void requirePython(JobConf conf, CommandLine cl) {
    String master = sessionMaster != null ? sessionMaster : spark.master;
    if (master == null) {
      master = conf.value("spark.master");
    }
    if (master != null && !master.startsWith("local")) {
      return; // the executors' nodes have their own Python
    }
    String value = conf.value(SpindleConfig.TRAIN_PYTHON.key());
    String python = value == null ? SpindleConfig.TRAIN_PYTHON.defaultValue() : value;
    pythonCheck =
        master == null || master.equals("local") || master.startsWith("local[")
            ? WarmTrainers.start(python, Math.min(worldSize, 16)) // this JVM starts the trainers
            : PythonClient.startImportCheck(python);
    pythonCheckLine = cl;
  }

  /** The verdict of {@link #requirePython}'s check, before the run's first Spark job. */
  private void awaitPython() {
    if (pythonCheck == null) {
      return;
    }
    try {
      pythonCheck.await();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(pythonCheckLine, e.getMessage());
    }
  }

  /**
   * Adds to the shared checks: {@code --state-dir}, which a master other than a local one needs, is
   * a folder or can be made one.
   *
   * @throws ParameterException when the master needs {@code --state-dir} and it is not given
   */
  @Override
  void check(Preflight preflight, Map<String, String> settings) throws IOException {
    super.check(preflight, settings);
    String stateDir = SpindleConfig.get(settings, SpindleConfig.TRAIN_STATE_DIR);
    String master = Sessions.master(spark.master, settings);
    if (stateDir.isEmpty() && TrainJob.needsStateDir(master)) {
      throw new ParameterException(spec.commandLine(), TrainJob.stateDirRequired(master));
    }
    preflight.folder("--state-dir", stateDir);
  }

  @Override
  FeedReport execute(Feed feed) throws IOException {
    try {
      awaitPython();
      List<String> args = own.command.subList(1, own.command.size());
      return feed.train(own.command.get(0), args.toArray(new String[0]));
    } finally {
      WarmTrainers.stopAll(); // those no rank took: its restarts start cold
    }
  }
}
