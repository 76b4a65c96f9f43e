package dev.spindle.spark.cli;

import dev.spindle.Feed;
import dev.spindle.FeedReport;
import dev.spindle.Spindle;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.plan.MixSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What {@code feed} and {@code train} share: a run of the epoch plans through {@link Feed}, its
 * input, plan and resume flags, and running it on a session of the command's own ({@link #call}) or
 * on one the caller owns ({@link #run(FeedRunCommand, CommandLine, SparkSession, String[])}). A
 * subclass brings its own flags ({@code F}, put into the settings by {@link #putInto}) and what it
 * does with the built {@link Feed} ({@link #execute}). Flag mistakes are refused before any Spark
 * work. Main thread.
 *
 * @param <F> the command's own flags, a picocli mixin
 */
abstract class FeedRunCommand<F> implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--input",
      paramLabel = "URI",
      description =
          "Shards (a .tar or .parquet file, a folder of them, a brace pattern, an"
              + " image folder tree) or a preprocess output folder (its _manifest.json);"
              + " or --mix")
  String input;

  @Option(
      names = "--mix",
      paramLabel = "NAME=PROPORTION:URI",
      description =
          "A source of a weighted mixture, instead of --input; repeat for each (spark.spindle.mix):"
              + " --mix web=0.7:URI1 --mix books=0.3:URI2 draws every batch 70/30 from the two")
  List<String> mix;

  @Option(
      names = "--mix-epoch",
      paramLabel = "RULE",
      description =
          "Samples in one epoch of a mixture: total, samples:N, first-exhausted or all-exhausted"
              + " (spark.spindle.mix.epoch; default ${bundle:spark.spindle.mix.epoch})")
  String mixEpoch;

  @Option(
      names = "--world-size",
      required = true,
      paramLabel = "W",
      converter = Converters.PositiveInt.class,
      description = "Trainer ranks")
  int worldSize;

  @Option(
      names = "--epochs",
      paramLabel = "E",
      converter = Converters.PositiveInt.class,
      description = "Run until epochs 0..E-1 are complete (default ${DEFAULT-VALUE})")
  int epochs = 1;

  @Option(
      names = "--seed",
      paramLabel = "S",
      description =
          "Seed of the epoch plans (spark.spindle.seed; default" + " ${bundle:spark.spindle.seed})")
  String seed;

  @Mixin ImageFlags image;

  @Option(
      names = "--remainder",
      paramLabel = "POLICY",
      description =
          "Samples that fill no whole round: DROP_LAST, PAD or EXACT"
              + " (spark.spindle.feed.remainder; default ${bundle:spark.spindle.feed.remainder})")
  String remainder;

  @Option(
      names = "--batch-tokens",
      paramLabel = "N",
      description =
          "Pack batches to at most N tokens of a list field's lengths, --batch-size being the most"
              + " rows (spark.spindle.batchTokens; default ${bundle:spark.spindle.batchTokens}:"
              + " batches of --batch-size samples)")
  String batchTokens;

  @Option(
      names = "--batch-tokens-field",
      paramLabel = "FIELD",
      description =
          "The declared list field --batch-tokens counts (spark.spindle.batchTokens.field;"
              + " default: the one list<...> field of --fields)")
  String batchTokensField;

  @Option(
      names = "--manifest",
      paramLabel = "FILE",
      description =
          "Where the shard list and counts are cached (default: _spindle_manifest.json"
              + " in the input)")
  String manifest;

  @Option(
      names = "--resume",
      paramLabel = "STATE.json",
      description = "Continue from this loader state")
  Path resume;

  /**
   * The command's own flags: a mixin rather than the subclass's fields so that help lists them
   * after the plan's flags and before the Spark job's (picocli lists a superclass's first).
   */
  @Mixin final F own;

  @Mixin ColumnFlags columns;
  @Mixin ProgressFlags progress;
  @Mixin ReportOption report;
  @Mixin SparkOptions spark;

  /** The state {@code --resume} names, read once ({@link #readResume}), and as parsed. */
  private String resumeJson;

  private LoaderState resumed;

  FeedRunCommand(F own) {
    this.own = own;
  }

  /**
   * Parses {@code argv} (the flags after the command's name) with {@code cl}, {@code command}'s
   * command line, and runs it on {@code session}, which stays open; the flags' settings apply to
   * this run only.
   *
   * @throws ParameterException for a usage error, before any Spark work
   */
  static FeedReport run(
      FeedRunCommand<?> command, CommandLine cl, SparkSession session, String[] argv)
      throws IOException {
    cl.parseArgs(argv);
    return command.runOn(session, command.settings(cl), true);
  }

  @Override
  public final Integer call() throws Exception {
    CommandLine cl = spec.commandLine();
    Map<String, String> settings = settings(cl);
    FeedReport r =
        Jobs.run(
            cl,
            spec.name(),
            spark,
            progress,
            settings,
            check -> check(check, settings),
            session -> runOn(session, settings, false)); // the session holds the settings
    Jobs.summary(
        cl,
        r.fields(),
        report,
        StateNotes.of(
            resumed,
            resume,
            stopAfterBatches(),
            savedState(),
            r.fields(),
            LoaderState.fromJson(r.loaderState())));
    return 0;
  }

  /**
   * The checks of the command's paths before its session starts: the input exists, {@code --resume}
   * reads and parses, {@code --report} and {@code --manifest} can be written. The cached manifest
   * itself is read by the job, which reads its binary form when that is current (reading the JSON
   * here would cost what the binary form saves). A subclass adds its own flags' checks.
   */
  void check(Preflight preflight, Map<String, String> settings) throws IOException {
    if (input != null) {
      preflight.input(input);
    } else {
      for (String uri : MixSpec.parse(settings.get(SpindleConfig.MIX.key()), null).uris()) {
        preflight.input(uri);
      }
    }
    preflight.localFile("--report", report.file);
    if (manifest != null) {
      preflight.file("--manifest", manifest);
    }
    readResume();
  }

  /**
   * Puts the command's own flags into {@code conf}, after the shared ones.
   *
   * @throws ParameterException for flags that do not go together
   */
  abstract void putInto(JobConf conf, CommandLine cl);

  /** Runs {@code feed}, built from the shared flags, as the command does. */
  abstract FeedReport execute(Feed feed) throws IOException;

  /** {@code --stop-after-batches}, or 0, for the summary. */
  int stopAfterBatches() {
    return 0;
  }

  /** Where the run wrote its loader state ({@code --save-state}), or null, for the summary. */
  Path savedState() {
    return null;
  }

  /** Every setting, checked before any Spark work. */
  private Map<String, String> settings(CommandLine cl) throws IOException {
    JobConf conf = JobConf.of(spark, cl);
    conf.flag("--seed", seed, SpindleConfig.SEED.key());
    image.putInto(conf);
    conf.flag("--remainder", remainder, SpindleConfig.FEED_REMAINDER.key());
    conf.flag("--batch-tokens", batchTokens, SpindleConfig.BATCH_TOKENS.key());
    conf.flag("--batch-tokens-field", batchTokensField, SpindleConfig.BATCH_TOKENS_FIELD.key());
    conf.flag("--mix", mix == null ? null : String.join(";", mix), SpindleConfig.MIX.key());
    conf.flag("--mix-epoch", mixEpoch, SpindleConfig.MIX_EPOCH.key());
    putInto(conf, cl);
    columns.putInto(conf);
    Map<String, String> checked = conf.checked(cl);
    boolean mixed = !checked.getOrDefault(SpindleConfig.MIX.key(), "").isBlank();
    if (input == null && !mixed) {
      throw new ParameterException(
          cl, "Missing required option: '--input=URI' (or --mix NAME=PROPORTION:URI, repeated)");
    }
    if (input != null && mixed) {
      throw new ParameterException(
          cl,
          "--input and --mix (spark.spindle.mix) do not go together: give one input or a mixture");
    }
    return checked;
  }

  /** {@code perRun}: the settings go to this run only (the session is the caller's). */
  private FeedReport runOn(SparkSession session, Map<String, String> settings, boolean perRun)
      throws IOException {
    Feed feed = Spindle.feed(session).worldSize(worldSize).epochs(epochs);
    if (input != null) {
      feed.input(input);
    }
    if (perRun) {
      settings.forEach(
          (k, v) -> {
            if (k.startsWith("spark.spindle.")) {
              feed.set(k, v);
            }
          });
    }
    if (manifest != null) {
      feed.manifest(manifest);
    }
    if (resume != null) {
      readResume();
      feed.resume(resumeJson);
    }
    FeedReport r = execute(feed);
    report.write(r);
    return r;
  }

  /**
   * Reads and parses {@code --resume}'s state, once.
   *
   * @throws IOException naming the file when there is none or it holds no loader state
   */
  private void readResume() throws IOException {
    if (resume == null || resumeJson != null) {
      return;
    }
    String json;
    try {
      json = Files.readString(resume);
    } catch (NoSuchFileException e) {
      throw new IOException("Resume state not found: " + resume); // its cause says only the path
    }
    try {
      resumed = LoaderState.fromJson(json);
    } catch (IllegalArgumentException e) {
      throw new IOException("Cannot resume from " + resume + ": " + e.getMessage());
    }
    resumeJson = json;
  }
}
