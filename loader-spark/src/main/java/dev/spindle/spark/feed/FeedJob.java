package dev.spindle.spark.feed;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.manifest.ClusterShardCounter;
import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestCache;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.metrics.QuarantineList;
import dev.spindle.spark.metrics.TaskTimeline;
import dev.spindle.spark.metrics.Timeline;
import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.plan.MixSpec;
import dev.spindle.spark.plan.Mixture;
import dev.spindle.spark.plan.PlanSpec;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.plan.Remainder;
import dev.spindle.spark.plan.TokenBudget;
import dev.spindle.spark.progress.JobLabel;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.serve.BatchRun;
import dev.spindle.spark.serve.FeedInputs;
import dev.spindle.spark.serve.FeedSettings;
import dev.spindle.spark.serve.FeedSlice;
import dev.spindle.spark.serve.FeedTask;
import dev.spindle.spark.serve.FeederReport;
import dev.spindle.spark.serve.HostCopies;
import dev.spindle.spark.serve.IoReport;
import dev.spindle.spark.serve.RankServeTask;
import dev.spindle.spark.serve.ServeSettings;
import dev.spindle.spark.serve.ServeStage;
import dev.spindle.spark.serve.ServedRank;
import dev.spindle.spark.serve.TaskOutcome;
import dev.spindle.spark.shard.HadoopConf;
import dev.spindle.spark.shard.SkippedInputs;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;

/**
 * {@code feed}: runs epoch plans on Spark and delivers every rank's batches to the consumer. Per
 * epoch: the plan is computed on the driver (refused before any task when it cannot be equal),
 * broadcast, cut into partitions of (rank, batch) runs; each task reads only its planned samples,
 * decodes them, checks each batch, identified by its {@code BatchKey}, against the plan and hands
 * it to the consumer, and returns per slice its keys, counts and digest ({@link BatchRun}); the
 * driver's {@link FeedLedger} takes each batch once and checks that every rank got each planned
 * batch, in O(ranks + runs). Runs on the driver; one run at a time per SparkSession.
 */
public final class FeedJob {
  private static final ObjectMapper JSON = new ObjectMapper();

  private FeedJob() {}

  public static FeedResult run(SparkSession spark, FeedRequest request) throws IOException {
    long startNanos = System.nanoTime();
    long startMs = System.currentTimeMillis();
    Settings conf = request.settings();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    MixedInput mix = loadMixture(jsc, request);
    ManifestCache.Loaded loaded = mix != null ? mix.loaded() : loadManifest(jsc, request);
    Manifest manifest = loaded.manifest();
    FeedSettings settings = FeedSettings.from(conf, manifest).withIndexes(loaded.indexes());
    LoaderState state =
        startState(jsc, manifest, mix == null ? null : mix.mixture(), request, settings);
    if (state.epoch() >= request.epochs()) {
      throw new IllegalArgumentException(
          "Nothing to do: the state is at epoch "
              + state.epoch()
              + " and --epochs is "
              + request.epochs()
              + " (epochs 0.."
              + (request.epochs() - 1)
              + " are complete)");
    }
    int partitions = conf.get(SpindleConfig.FEED_PARTITIONS);
    ServeSettings serve = conf.get(SpindleConfig.FEED_SERVE) ? ServeSettings.from(conf) : null;
    if (serve != null) {
      ServeStage.announce(jsc, request.worldSize(), serve);
    }
    Epochs epochs =
        new Epochs(
            jsc,
            manifest,
            settings,
            HadoopConf.of(spark.sparkContext()),
            serve != null
                ? request.worldSize()
                : partitions > 0 ? partitions : jsc.defaultParallelism(),
            serve,
            mix);
    state = epochs.run(state, request);
    double wall = (System.nanoTime() - startNanos) / 1e9;
    checkBudget(epochs);
    JobReport report =
        epochs
            .report(request, loaded, state, wall, startMs)
            .put("master", spark.sparkContext().master());
    return new FeedResult(report, state);
  }

  /**
   * The request's mixture ({@code spark.spindle.mix}) with every source's manifest loaded and laid
   * end to end, or null when the request reads one input. Refuses {@code --manifest} with a
   * mixture: each source caches its manifest next to its own data.
   */
  public static MixedInput loadMixture(JavaSparkContext jsc, FeedRequest request)
      throws IOException {
    Settings conf = request.settings();
    if (conf.get(SpindleConfig.MIX).isEmpty()) {
      return null;
    }
    if (request.manifestFile() != null) {
      throw new IllegalArgumentException(
          "--manifest (a manifest cache file) cannot be used with a mixture (--mix,"
              + " spark.spindle.mix): each source caches its manifest next to its own data");
    }
    MixSpec spec = MixSpec.parse(conf.get(SpindleConfig.MIX), conf.get(SpindleConfig.MIX_EPOCH));
    return MixedInput.load(
        cache(jsc, conf), spec, conf.get(SpindleConfig.FEED_MANIFEST_CHANGED).equals("recount"));
  }

  private static ManifestCache cache(JavaSparkContext jsc, Settings conf) {
    return new ManifestCache(
        jsc.sc().hadoopConfiguration(),
        conf.get(SpindleConfig.FOLDER_SHARD_FILES),
        conf.parquetColumns(),
        new ClusterShardCounter(jsc));
  }

  /** The request's manifest: the cached one if it still describes the input, else counted. */
  public static ManifestCache.Loaded loadManifest(JavaSparkContext jsc, FeedRequest request)
      throws IOException {
    Settings conf = request.settings();
    MixedInput mix = loadMixture(jsc, request);
    if (mix != null) {
      return mix.loaded();
    }
    return cache(jsc, conf)
        .load(
            request.input(),
            request.manifestFile(),
            conf.get(SpindleConfig.FEED_MANIFEST_CHANGED).equals("recount"));
  }

  /**
   * The state to start from, with the plan settings checked against a resumed state; the batch size
   * is the one every job's sample path reads ({@code settings}).
   */
  public static LoaderState startState(
      Manifest manifest, FeedRequest request, FeedSettings settings) {
    return startState(manifest, null, request, settings);
  }

  /**
   * The same for a run that draws from {@code mixture} (null: one input); a resumed state must
   * record the same mixture.
   */
  public static LoaderState startState(
      Manifest manifest, Mixture mixture, FeedRequest request, FeedSettings settings) {
    if (TokenLengths.field(request.settings()) != null) {
      throw new IllegalStateException(
          "spark.spindle.batchTokens is set: plan with the budget's lengths"
              + " (startState(jsc, manifest, mixture, request, settings))");
    }
    return startState(manifest, mixture, null, request, settings);
  }

  /**
   * The state to start from for a job that may pack batches to a token budget ({@code
   * spark.spindle.batchTokens}): the samples' lengths of its field are read first (one Spark job).
   * A resumed state must record the same budget.
   */
  public static LoaderState startState(
      JavaSparkContext jsc,
      Manifest manifest,
      Mixture mixture,
      FeedRequest request,
      FeedSettings settings) {
    TokenBudget budget =
        TokenLengths.budget(jsc, manifest, request.settings(), settings.sample().limits());
    return startState(manifest, mixture, budget, request, settings);
  }

  private static LoaderState startState(
      Manifest manifest,
      Mixture mixture,
      TokenBudget budget,
      FeedRequest request,
      FeedSettings settings) {
    Settings conf = request.settings();
    LoaderState resume = request.resume();
    long seed = conf.get(SpindleConfig.SEED);
    int batchSize = settings.sample().batchSize();
    Remainder remainder = Remainder.valueOf(conf.get(SpindleConfig.FEED_REMAINDER));
    int window = conf.get(SpindleConfig.SHUFFLE_WINDOW);
    if (resume == null) {
      return LoaderState.initial(
          manifest,
          new PlanSpec(seed, 0, request.worldSize(), batchSize, remainder, window)
              .withBudget(budget),
          mixture);
    }
    resume.requireMixture(mixture);
    if (budget != null || resume.budget() != null) {
      resume = resume.withBudget(budget); // refuses another budget, naming both
    }
    resume.requireSettings(
        new PlanSpec(
            conf.isSet(SpindleConfig.SEED) ? seed : resume.seed(),
            resume.epoch(),
            request.worldSize(),
            conf.isSet(SpindleConfig.BATCH_SIZE) ? batchSize : resume.batchSize(),
            conf.isSet(SpindleConfig.FEED_REMAINDER) ? remainder : resume.remainder(),
            conf.isSet(SpindleConfig.SHUFFLE_WINDOW) ? window : resume.shuffleWindow()));
    return resume;
  }

  private static void checkBudget(Epochs epochs) {
    FailureBudget budget = epochs.settings.sample().budget();
    if (!budget.exceeded(epochs.quarantined.total(), epochs.samples)) {
      return;
    }
    StringBuilder msg =
        new StringBuilder(
            String.format(
                "Failure budget exceeded: %d of %d samples quarantined (spark.spindle.maxFailures allows"
                    + " %s). First causes:",
                epochs.quarantined.total(), epochs.samples, budget.describeForSamples()));
    epochs.quarantined.first().stream()
        .limit(10)
        .forEach(q -> msg.append("\n  ").append(q.describe()));
    throw new IllegalStateException(msg.toString());
  }

  /** The epochs of one run and what they delivered; driver thread. */
  private static final class Epochs {
    private final JavaSparkContext jsc;
    private final Manifest manifest;
    private final FeedSettings settings;
    private final HadoopConf conf;
    private final int partitions;
    private final ServeSettings serve;
    private final MixedInput mix;
    private final long[] bySource;
    private final FeederReport feeders = new FeederReport();
    private final String runId = UUID.randomUUID().toString();
    private final ProgressCounters progress;
    private final List<Map<String, Object>> ranks = new ArrayList<>();
    private final List<Map<String, Object>> tokenEpochs = new ArrayList<>();
    private final QuarantineList quarantined = new QuarantineList();
    private final List<Timeline.Task> timeline = new ArrayList<>();
    private long rows;
    private long samples;
    private long samplesRead;
    private long bytesIn;
    private long imagesDecoded;
    private final HostCopies hostCopies = new HostCopies();
    private final IoReport io = new IoReport();
    private long firstBatchEpochMs = Long.MAX_VALUE;
    private long refused;
    private boolean stoppedEarly;

    Epochs(
        JavaSparkContext jsc,
        Manifest manifest,
        FeedSettings settings,
        HadoopConf conf,
        int partitions,
        ServeSettings serve,
        MixedInput mix) {
      this.jsc = jsc;
      this.serve = serve;
      this.mix = mix;
      this.bySource = mix == null ? null : new long[mix.mixture().sources()];
      this.manifest = manifest;
      this.settings = settings;
      this.conf = conf;
      this.partitions = partitions;
      progress = ProgressCounters.register(jsc.sc());
    }

    /** Runs epochs until the request's last one is complete or the run stops early. */
    LoaderState run(LoaderState state, FeedRequest request) {
      long left = request.stopAfterBatches() > 0 ? request.stopAfterBatches() : Long.MAX_VALUE;
      while (state.epoch() < request.epochs() && left > 0) {
        EpochPlan plan = state.resume(manifest, request.worldSize());
        if (plan.epoch() >= request.epochs()) {
          return plan.stateAtStart();
        }
        int first = plan.rank(0).firstBatch();
        int stop = (int) Math.min(plan.batchesPerRank(), first + Math.min(left, Integer.MAX_VALUE));
        int[] starts;
        try (JobLabel label = label(plan, stop, request.epochs())) {
          starts = runEpoch(plan, stop);
        }
        left -= stop - first;
        int[] consumed = new int[plan.worldSize()];
        for (int r = 0; r < consumed.length; r++) {
          consumed[r] = Math.max(stop, starts[r]);
        }
        state = plan.stateAfter(consumed);
        stoppedEarly = stop < plan.batchesPerRank();
      }
      return state;
    }

    /**
     * Names the epoch's job: {@code feed epoch 3 of 0..9 (4 ranks, batches 0..124 of 125 per
     * rank)}, with the rows it delivers as the progress total.
     */
    private JobLabel label(EpochPlan plan, int stop, int epochs) {
      long rows = 0;
      for (int r = 0; r < plan.worldSize(); r++) {
        RankPlan rank = plan.rank(r);
        rows += rank.firstBatch() < stop ? rank.rows(rank.firstBatch(), stop) : 0;
      }
      String epoch = "epoch " + plan.epoch() + " of 0.." + (epochs - 1); // as --epochs counts
      String description =
          "feed "
              + epoch
              + " ("
              + plan.worldSize()
              + " ranks, batches "
              + plan.rank(0).firstBatch()
              + ".."
              + (stop - 1)
              + " of "
              + plan.batchesPerRank()
              + " per rank"
              + (serve != null ? ", served" : "")
              + ")";
      JobLabel label =
          JobLabel.of(jsc.sc(), "spindle-feed-" + runId, "feed " + epoch, description, rows);
      return settings.hasImage() ? label : label.withoutImages();
    }

    /** Delivers the epoch up to {@code stop}; returns the batch each rank started from. */
    private int[] runEpoch(EpochPlan plan, int stop) {
      int[] starts = new int[plan.worldSize()];
      for (int r = 0; r < starts.length; r++) {
        starts[r] = plan.rank(r).firstBatch();
      }
      List<TaskOutcome> outcomes = new ArrayList<>();
      if (stop > plan.rank(0).firstBatch()) {
        Broadcast<FeedInputs> inputs = jsc.broadcast(FeedInputs.of(plan, manifest));
        try (TaskTimeline recorder = TaskTimeline.attach(jsc.sc())) {
          FeedTask task = new FeedTask(runId, inputs, settings, conf, progress);
          if (serve != null) {
            outcomes = ServeStage.run(jsc, plan, stop, new RankServeTask(task, serve, runId));
          } else {
            List<List<FeedSlice>> parts = FeedPartitions.split(plan, stop, partitions);
            outcomes = jsc.parallelize(parts, parts.size()).map(task::run).collect();
          }
          List<TaskOutcome> got = outcomes; // one per partition, in partition order
          timeline.addAll(
              recorder.tasks(
                  got.size(),
                  TaskTimeline.WAIT_MS,
                  p -> p < got.size() ? got.get(p).timelineCounts() : null));
        } finally {
          inputs.destroy();
        }
      }
      Map<Integer, ServedRank> served = new java.util.HashMap<>();
      for (TaskOutcome o : outcomes) {
        if (o.served() != null) {
          served.put(o.served().rank(), o.served());
          starts[o.served().rank()] = o.served().firstBatch();
          feeders.add(o.served());
        }
      }
      if (mix != null) {
        for (int r = 0; r < starts.length; r++) {
          long[] counts = plan.rank(r).realBySource(plan.mixture(), starts[r], stop);
          for (int s = 0; s < counts.length; s++) {
            bySource[s] += counts[s];
          }
        }
      }
      FeedLedger ledger = new FeedLedger(plan, starts, stop);
      outcomes.forEach(
          o -> {
            ledger.add(o);
            account(o);
          });
      for (FeedLedger.RankResult r : ledger.results()) {
        Map<String, Object> entry = r.toMap();
        if (served.containsKey(r.rank())) {
          entry.putAll(served.get(r.rank()).toReport());
        }
        ranks.add(entry);
        rows += r.samples() + r.padded();
        samples += r.samples();
      }
      if (plan.spec().budget() != null) {
        tokenEpochs.add(tokens(plan, ledger.results()));
      }
      quarantined.addAll(ledger.quarantined());
      refused += ledger.refused();
      return starts;
    }

    /**
     * What an epoch's run delivered under a token budget: its batches (padding batches included)
     * and the tokens of its real batches, summed over the ranks.
     */
    private static Map<String, Object> tokens(EpochPlan plan, List<FeedLedger.RankResult> done) {
      long batches = 0;
      long tokens = 0;
      for (FeedLedger.RankResult r : done) {
        RankPlan rank = plan.rank(r.rank());
        batches += r.batches();
        for (int k = r.firstBatch(); k < r.firstBatch() + r.batches(); k++) {
          tokens += rank.paddedIn(k) == 0 ? rank.batchTokens(k) : 0;
        }
      }
      Map<String, Object> e = new java.util.LinkedHashMap<>();
      e.put("epoch", plan.epoch());
      e.put("leg", plan.leg());
      e.put("batches", batches);
      e.put("tokens", tokens);
      return e;
    }

    private void account(TaskOutcome o) {
      hostCopies.add(o);
      io.add(o);
      samplesRead += o.samplesRead();
      bytesIn += o.bytesIn();
      imagesDecoded += o.imagesDecoded();
      if (o.firstBatchEpochMs() > 0) {
        firstBatchEpochMs = Math.min(firstBatchEpochMs, o.firstBatchEpochMs());
      }
    }

    JobReport report(
        FeedRequest request,
        ManifestCache.Loaded loaded,
        LoaderState state,
        double wall,
        long startMs)
        throws IOException {
      PlanSpec spec = state.spec();
      JobReport report =
          new JobReport("feed")
              .put("input", request.input())
              .put("manifest", loaded.reportEntry())
              .put("input_skipped", SkippedInputs.reportList(loaded.skipped()))
              .put("input_skipped_total", loaded.skipped().size())
              .put("world_size", request.worldSize())
              .put("seed", spec.seed())
              .put("batch_size", spec.batchSize())
              .put("remainder", spec.remainder().name())
              .put("shuffle_window", spec.shuffleWindow())
              .put("partitions", partitions)
              .put("threads", settings.sample().threads())
              .put("image_shape", settings.hasImage() ? settings.sample().images().shape() : null)
              .put(
                  "transforms",
                  settings.hasImage() ? settings.sample().images().transforms() : null)
              .put("ranks", ranks)
              .put(
                  "serve",
                  serve == null
                      ? null
                      : Map.of(
                          "device",
                          serve.device(),
                          "socket",
                          serve.socketTemplate(),
                          "slots",
                          serve.slots(),
                          "trainer_timeout_s",
                          serve.trainerTimeout().toSeconds()))
              .put("feeders", feeders.entries())
              .put("images", rows)
              .put("samples", samples)
              .put("samples_read", samplesRead)
              .put("bytes_in", bytesIn)
              .put("images_decoded", imagesDecoded)
              .put("host_copies_per_sample", hostCopies.perSample())
              .put("io", io.toReport())
              .put("failures", quarantined.total());
      if (spec.budget() != null) {
        report
            .put("batch_tokens", spec.budget().tokens())
            .put("batch_tokens_field", spec.budget().field())
            .put("token_epochs", tokenEpochs);
      }
      if (mix != null) {
        report.put("mix", mix.report(bySource));
      }
      return quarantined
          .putInto(report)
          .put("repeats_not_redelivered", refused)
          .put("stopped_early", stoppedEarly)
          .put("state", JSON.readValue(state.toJson(), Map.class))
          .put("wall_s", wall)
          .put("images_per_s", rows / wall)
          .put("mb_per_s", bytesIn / 1e6 / wall)
          .put(
              "time_to_first_batch_s",
              firstBatchEpochMs == Long.MAX_VALUE ? null : (firstBatchEpochMs - startMs) / 1000.0)
          .put("timeline", Timeline.of(startMs, timeline));
    }
  }
}
