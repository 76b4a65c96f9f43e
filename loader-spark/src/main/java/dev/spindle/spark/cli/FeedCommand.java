package dev.spindle.spark.cli;

import dev.spindle.Feed;
import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.spark.config.SpindleConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code feed}: {@link Spindle#feed} on a session of its own, or, through {@link #run(SparkSession,
 * String[])}, on one the caller owns (tests, notebooks). Flag mistakes are refused before any Spark
 * work. Main thread.
 */
@Command(
    name = "feed",
    header = "Run epoch plans and deliver every rank's batches (or serve trainers).",
    mixinStandardHelpOptions = true,
    resourceBundle = KeyDefaults.NAME,
    sortOptions = false,
    description = {
      "Runs the epoch plans on Spark and delivers every rank's batches, each once and"
          + " in plan order, to the in-JVM consumer that checks and counts them, or with --serve to"
          + " each rank's PyTorch trainer through the trainer bridge of its executor."
    })
public final class FeedCommand extends FeedRunCommand<FeedCommand.Flags> {
  /** The flags only {@code feed} takes. */
  static final class Flags {
    @Option(
        names = "--partitions",
        paramLabel = "P",
        description =
            "Spark partitions per epoch (spark.spindle.feed.partitions; 0, the default:"
                + " the default parallelism)")
    String partitions;

    @Option(
        names = "--stop-after-batches",
        paramLabel = "K",
        converter = Converters.NonNegativeInt.class,
        description = "Stop once every rank got K batches (needs --save-state)")
    int stopAfterBatches;

    @Option(
        names = "--save-state",
        paramLabel = "FILE",
        description = "Write the loader state at the end, for --resume")
    Path saveState;

    @Mixin ServeFlags serve;
    @Mixin TraceOption trace;
  }

  public FeedCommand() {
    super(new Flags());
  }

  /**
   * Runs {@code argv} (the flags after {@code feed}) on {@code session}, which stays open; the
   * flags' settings apply to this run only.
   *
   * @throws ParameterException for a usage error, before any Spark work
   */
  public static FeedReport run(SparkSession session, String[] argv) throws IOException {
    FeedCommand command = new FeedCommand();
    return run(command, new CommandLine(command), session, argv);
  }

  @Override
  void putInto(JobConf conf, CommandLine cl) {
    conf.flag("--partitions", own.partitions, SpindleConfig.FEED_PARTITIONS.key());
    own.serve.putInto(conf, own.partitions != null, cl);
    own.trace.putInto(conf);
    if (own.stopAfterBatches > 0 && own.saveState == null) {
      throw new ParameterException(
          cl, "--stop-after-batches needs --save-state FILE to continue from");
    }
  }

  @Override
  void check(Preflight preflight, Map<String, String> settings) throws IOException {
    super.check(preflight, settings);
    preflight.localFile("--save-state", own.saveState);
  }

  @Override
  FeedReport execute(Feed feed) throws IOException {
    FeedReport r = feed.stopAfterBatches(own.stopAfterBatches).run();
    if (own.saveState != null) {
      r.saveState(own.saveState);
    }
    return r;
  }

  @Override
  int stopAfterBatches() {
    return own.stopAfterBatches;
  }

  @Override
  Path savedState() {
    return own.saveState;
  }
}
