package dev.spindle.spark.cli;

import dev.spindle.Feed;
import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.progress.ProgressPrinter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code feed}: {@link Spindle#feed} on a session of its own, or, through {@link #run(SparkSession,
 * String[])}, on one the caller owns (tests, notebooks). Flag mistakes are refused before any
 * Spark work. Main thread.
 */
@Command(name = "feed",
    header = "Run epoch plans and deliver every rank's batches (or serve trainers).",
    mixinStandardHelpOptions = true, resourceBundle = KeyDefaults.NAME,
    sortOptions = false,
    description = {"Runs the epoch plans on Spark and delivers every rank's batches, each once and"
        + " in plan order, to the in-JVM consumer that checks and counts them, or with --serve to"
        + " each rank's PyTorch trainer through the trainer bridge of its executor."})
public final class FeedCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--input", required = true, paramLabel = "URI",
      description = "Shards (a .tar or .parquet file, a folder of them, a brace pattern, an"
          + " image folder tree) or a preprocess output folder (its _manifest.json)")
  String input;

  @Option(names = "--world-size", required = true, paramLabel = "W",
      converter = Converters.PositiveInt.class, description = "Trainer ranks")
  int worldSize;

  @Option(names = "--epochs", paramLabel = "E", converter = Converters.PositiveInt.class,
      description = "Run until epochs 0..E-1 are complete (default ${DEFAULT-VALUE})")
  int epochs = 1;

  @Option(names = "--seed", paramLabel = "S",
      description = "Seed of the epoch plans (spark.spindle.seed; default"
          + " ${bundle:spark.spindle.seed})")
  String seed;

  @Mixin ImageFlags image;

  @Option(names = "--remainder", paramLabel = "POLICY",
      description = "Samples that fill no whole round: DROP_LAST, PAD or EXACT"
          + " (spark.spindle.feed.remainder; default ${bundle:spark.spindle.feed.remainder})")
  String remainder;

  @Option(names = "--partitions", paramLabel = "P",
      description = "Spark partitions per epoch (spark.spindle.feed.partitions; 0, the default:"
          + " the default parallelism)")
  String partitions;

  @Option(names = "--manifest", paramLabel = "FILE",
      description = "Where the shard list and counts are cached (default: _spindle_manifest.json"
          + " in the input)")
  String manifest;

  @Option(names = "--resume", paramLabel = "STATE.json",
      description = "Continue from this loader state")
  Path resume;

  @Option(names = "--stop-after-batches", paramLabel = "K",
      converter = Converters.NonNegativeInt.class,
      description = "Stop once every rank got K batches (needs --save-state)")
  int stopAfterBatches;

  @Option(names = "--save-state", paramLabel = "FILE",
      description = "Write the loader state at the end, for --resume")
  Path saveState;

  /** The state {@code --resume} read, for the summary. */
  private LoaderState resumed;

  @Mixin ServeFlags serve;
  @Mixin ColumnFlags columns;
  @Mixin ProgressFlags progress;
  @Mixin ReportOption report;
  @Mixin TraceOption trace;
  @Mixin SparkOptions spark;

  /**
   * Runs {@code argv} (the flags after {@code feed}) on {@code session}, which stays open; the
   * flags' settings apply to this run only.
   *
   * @throws ParameterException for a usage error, before any Spark work
   */
  public static FeedReport run(SparkSession session, String[] argv) throws IOException {
    FeedCommand command = new FeedCommand();
    CommandLine cl = new CommandLine(command);
    cl.parseArgs(argv);
    return command.runOn(session, command.settings(cl), true);
  }

  @Override
  public Integer call() throws IOException {
    CommandLine cl = spec.commandLine();
    Map<String, String> settings = settings(cl);
    SparkSession session = Jobs.session(cl, "feed", spark, progress.with(settings));
    try {
      FeedReport r;
      try (ProgressPrinter shown = progress.start(session)) {
        r = runOn(session, settings, false); // the session holds the settings
      }
      Jobs.summary(cl, r.fields(), report, StateNotes.of(resumed, resume, stopAfterBatches,
          saveState, r.fields(), LoaderState.fromJson(r.loaderState())));
      return 0;
    } finally {
      session.stop();
    }
  }

  /** Every setting, checked before any Spark work. */
  private Map<String, String> settings(CommandLine cl) throws IOException {
    JobConf conf = JobConf.of(spark, cl);
    conf.flag("--seed", seed, SpindleConfig.SEED.key());
    image.putInto(conf);
    conf.flag("--remainder", remainder, SpindleConfig.FEED_REMAINDER.key());
    conf.flag("--partitions", partitions, SpindleConfig.FEED_PARTITIONS.key());
    serve.putInto(conf, partitions != null, cl);
    columns.putInto(conf);
    trace.putInto(conf);
    if (stopAfterBatches > 0 && saveState == null) {
      throw new ParameterException(cl,
          "--stop-after-batches needs --save-state FILE to continue from");
    }
    return conf.checked(cl);
  }

  /** {@code perRun}: the settings go to this run only (the session is the caller's). */
  private FeedReport runOn(SparkSession session, Map<String, String> settings, boolean perRun)
      throws IOException {
    Feed feed = Spindle.feed(session).input(input).worldSize(worldSize).epochs(epochs)
        .stopAfterBatches(stopAfterBatches);
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
      String state = readState(resume);
      resumed = LoaderState.fromJson(state);
      feed.resume(state);
    }
    FeedReport r = feed.run();
    if (saveState != null) {
      r.saveState(saveState);
    }
    report.write(r);
    return r;
  }

  private String readState(Path file) throws IOException {
    try {
      return Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new IOException("Resume state not found: " + file, e);
    }
  }
}
