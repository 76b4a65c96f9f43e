package dev.spindle.spark.train;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.feed.FeedRequest;
import dev.spindle.spark.manifest.ManifestCache;
import dev.spindle.spark.metrics.JobReport;
import dev.spindle.spark.metrics.QuarantineList;
import dev.spindle.spark.metrics.Timeline;
import dev.spindle.spark.plan.Digest;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.serve.BatchRun;
import dev.spindle.spark.serve.FeederReport;
import dev.spindle.spark.serve.HostCopies;
import dev.spindle.spark.serve.IoReport;
import dev.spindle.spark.serve.TaskOutcome;
import dev.spindle.spark.shard.SkippedInputs;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON report of a {@code train} run: the run's settings; per rank ({@code trainers}) its exit
 * code, wall time, time waiting for data, mean step time, restarts and failures, node and final
 * loader state; per rank and epoch ({@code ranks}) the leg served in the last attempt (first batch,
 * batches, samples, digest); the failed attempts' accounts ({@code restarts}) and where each
 * attempt started ({@code attempt_starts}); the feeders of the last attempt ({@code feeders}, as
 * {@code feed --serve} reports them); the quarantine list. {@code images} and {@code samples} count
 * what the final model was trained on (its lineage: the run from its start, the batches before the
 * last restart point included); {@code images_delivered} and {@code samples_delivered} also count
 * what failed attempts delivered past their start (trained again after a restart); {@code
 * host_copies_per_sample} the image bytes the finishing attempt's tasks copied on the host per
 * sample they delivered ({@link HostCopies}). Built from the ranks' runs ({@link BatchRun}) and the
 * plans, never their indices. Driver thread.
 */
final class TrainReport {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String EMPTY = Digest.of(new long[0]);

  private final FeedRequest request;
  private final TrainSettings train;
  private final ManifestCache.Loaded loaded;
  private final String stateDir;
  private final List<List<Map<String, Object>>> restarts = new ArrayList<>();
  private final List<Map<String, Object>> attemptStarts = new ArrayList<>();
  private final Map<Integer, Integer> failures = new java.util.HashMap<>();
  private long failedBatches;
  private long failedSamples;
  private long lineageBatches;
  private long lineageSamples;
  private final List<Map<String, Object>> trainers = new ArrayList<>();
  private final List<Map<String, Object>> legs = new ArrayList<>();

  /** Per epoch, the batches and (under a token budget) tokens of the real batches delivered. */
  private final java.util.TreeMap<Integer, long[]> epochTokens = new java.util.TreeMap<>();

  private final QuarantineList quarantined = new QuarantineList();
  private final FeederReport feeders = new FeederReport();
  private final HostCopies hostCopies = new HostCopies();
  private final IoReport io = new IoReport();
  private final long startMs = System.currentTimeMillis();
  private List<Timeline.Task> timeline = List.of();
  private long rows;
  private long samples;

  TrainReport(
      FeedRequest request, TrainSettings train, ManifestCache.Loaded loaded, String stateDir) {
    this.request = request;
    this.train = train;
    this.loaded = loaded;
    this.stateDir = stateDir;
  }

  /** Attempt {@code attempt} starts every rank at {@code point} (rank 0 at {@code at}). */
  void attemptStarted(int attempt, RestartPoint point, RankStart.Point at) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("attempt", attempt);
    m.put("step", point.step());
    m.put("epoch", at.epoch());
    m.put("batch", at.batch());
    m.put("from", point.fromCheckpoints() ? "checkpoint" : "start");
    m.put(
        "checkpoints",
        point.fromCheckpoints()
            ? point.ranks().stream().map(RestartPoint.Rank::checkpoint).toList()
            : null);
    m.put("why", point.why());
    attemptStarts.add(m);
  }

  /**
   * What an attempt's trainers took, over all ranks: from its start point on, and before it (the
   * final model's batches of earlier attempts, for the attempt that finished).
   */
  record Spans(RankStart.Span fromPoint, RankStart.Span beforePoint) {}

  /** An attempt failed: how each rank ended, and what its trainers took past its start. */
  void failedAttempt(List<TrainerExit> exits, Spans spans) {
    List<Map<String, Object>> attempt = new ArrayList<>();
    for (TrainerExit e : exits) {
      Map<String, Object> m = e.toReport();
      m.put("message", e.message());
      attempt.add(m);
      if (e.cause()) {
        failures.merge(e.rank(), 1, Integer::sum);
      }
    }
    restarts.add(attempt);
    failedBatches += spans.fromPoint().batches();
    failedSamples += spans.fromPoint().realSamples();
  }

  /**
   * The attempt that finished: the batches before its start point are the final model's from
   * earlier attempts.
   */
  void lineage(Spans spans) {
    lineageBatches = spans.beforePoint().batches();
    lineageSamples = spans.beforePoint().realSamples();
  }

  void finished(List<TrainRankResult> results) throws IOException {
    for (TrainRankResult r : results) {
      Map<String, Object> t = r.exit().toReport();
      t.put("steps", r.steps());
      t.put("step_s", r.stepSeconds());
      t.put("restarts", restarts.size());
      t.put("failures", failures.getOrDefault(r.exit().rank(), 0));
      t.put("state", r.finalState() == null ? null : JSON.readValue(r.finalState(), Map.class));
      trainers.add(t);
      for (TrainRankResult.Leg leg : r.legs()) {
        TaskOutcome o = leg.outcome();
        hostCopies.add(o);
        io.add(o);
        long real = 0;
        int batches = 0;
        long[] epoch = epochTokens.computeIfAbsent(leg.epoch(), e -> new long[2]);
        for (BatchRun b : o.runs()) {
          real += b.rows() - b.padded() - b.substituted();
          rows += b.rows();
          batches += b.batches();
          epoch[0] += b.batches();
          epoch[1] += b.tokens();
        }
        samples += real;
        quarantined.addAll(o.quarantined());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rank", r.exit().rank());
        m.put("epoch", leg.epoch());
        m.put("first_batch", o.served() == null ? null : o.served().firstBatch());
        m.put("batches", batches);
        m.put("samples", real);
        m.put("digest", digest(o));
        if (o.served() != null) {
          m.putAll(o.served().toReport());
          feeders.add(o.served());
        }
        legs.add(m);
      }
    }
  }

  /** {@code [{"epoch", "batches", "tokens"}]} of the last attempt, by epoch. */
  private List<Map<String, Object>> tokenEpochs() {
    List<Map<String, Object>> out = new ArrayList<>();
    epochTokens.forEach(
        (epoch, n) -> {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("epoch", epoch);
          m.put("batches", n[0]);
          m.put("tokens", n[1]);
          out.add(m);
        });
    return out;
  }

  /**
   * The digest of the leg's delivered indices in plan order (as {@code feed} reports it per rank):
   * a served leg is one run, whose task hashed what it handed over; none for an empty leg.
   */
  private static String digest(TaskOutcome o) {
    if (o.runs().isEmpty()) {
      return EMPTY;
    }
    BatchRun last = o.runs().get(o.runs().size() - 1);
    return o.runs().size() == 1 && last.digestFrom() == last.fromBatch() ? last.digest() : null;
  }

  /** The ranks' tasks of the attempt that finished, for the report's {@code timeline}. */
  void timeline(List<Timeline.Task> tasks) {
    timeline = tasks;
  }

  JobReport build(LoaderState end, double wall) throws IOException {
    long images = lineageBatches * end.batchSize() + rows;

    JobReport report =
        new JobReport("train")
            .put("input", request.input())
            .put("manifest", loaded.reportEntry())
            .put("input_skipped", SkippedInputs.reportList(loaded.skipped()))
            .put("input_skipped_total", loaded.skipped().size())
            .put("world_size", request.worldSize())
            .put("epochs", request.epochs())
            .put("seed", end.seed())
            .put("batch_size", end.batchSize())
            .put("remainder", end.remainder().name())
            .put("python", train.python())
            .put("script", train.script())
            .put("args", train.args())
            .put("state_dir", stateDir)
            .put("trainers", trainers)
            .put("restarts", restarts)
            .put("attempt_starts", attemptStarts)
            .put("ranks", legs)
            .put("feeders", feeders.entries())
            .put("images", images)
            .put("samples", lineageSamples + samples)
            .put("images_delivered", failedBatches * end.batchSize() + rows)
            .put("samples_delivered", failedSamples + samples)
            .put("images_last_attempt", rows)
            .put("host_copies_per_sample", hostCopies.perSample())
            .put("io", io.toReport())
            .put("failures", quarantined.total());
    if (!request.settings().get(SpindleConfig.FIELDS).hasImage()) {
      report.put("image_shape", null); // samples without an image: as feed and preprocess say it
    }
    if (end.budget() != null) {
      report
          .put("batch_tokens", end.budget().tokens())
          .put("batch_tokens_field", end.budget().field())
          .put("token_epochs", tokenEpochs());
    }
    return quarantined
        .putInto(report)
        .put("state", JSON.readValue(end.toJson(), Map.class))
        .put("wall_s", wall)
        .put("images_per_s", images / wall)
        .put("timeline", Timeline.of(startMs, timeline));
  }
}
