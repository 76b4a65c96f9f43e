package dev.spindle.spark.train;

import dev.spindle.spark.metrics.TaskTimeline;
import dev.spindle.spark.progress.JobLabel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * The attempts of one {@code train} run ({@link TrainJob}): the ranks' barrier stage, run again
 * from a {@link RestartPoint} after trainers fail, while restarts are left; one line per restart;
 * the run's error when it cannot go on. Driver thread.
 */
final class TrainAttempts {
  private static final Logger LOG = LoggerFactory.getLogger(TrainAttempts.class);
  private static final ClassTag<TrainRankResult> RESULT =
      ClassTag$.MODULE$.apply(TrainRankResult.class);

  private static final long EXIT_WAIT_MS = 30_000;

  /** Trainer lines the driver repeats for a rank that failed in another JVM (not echoed here). */
  private static final int TAIL_SHOWN = 10;

  private final JavaSparkContext jsc;
  private final int world;
  private final TrainTask task;
  private final TrainStateStore store;
  private final TrainSettings train;
  private final TrainReport report;
  private final RankStart.Legs legs;
  private final JobLabel label;

  TrainAttempts(
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
   * Runs the stage until every rank finished, restarting it after trainers' failures while restarts
   * are left; the final error names the state directory.
   */
  List<TrainRankResult> all() throws IOException {
    try {
      return attempts();
    } catch (TrainJob.TrainFailure e) {
      throw e;
    } catch (RuntimeException | IOException e) {
      TrainJob.TrainFailure f =
          new TrainJob.TrainFailure(rootMessage(e) + "\n" + TrainJob.stateNote(store));
      f.addSuppressed(e);
      throw f;
    }
  }

  private List<TrainRankResult> attempts() throws IOException {
    RestartPoint point = RestartPoint.choose(store, legs, world);
    if (point.fromCheckpoints() || point.why() != null) {
      TrainJob.say(
          "spindle train: states of an earlier run in " + store.location() + ": " + where(point));
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
        throw new TrainJob.TrainFailure(
            (sparkFailure == null
                    ? "ranks " + exits + " stopped without a failure of their own"
                    : rootMessage(sparkFailure))
                + "\n"
                + TrainJob.stateNote(store),
            sparkFailure);
      }
      report.failedAttempt(exits, spans(point, store));
      boolean restartable = causes.get(0).restartable(); // later ones may follow from it
      if (!restartable || attempt >= train.maxRestarts()) {
        throw new TrainJob.TrainFailure(message(causes, attempt, restartable), sparkFailure);
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
      batches += legs.between(r, legs.start(r), legs.at(r, point.ranks().get(r).state())).batches();
    }
    report.attemptStarted(attempt, point, legs.at(0, point.ranks().get(0).state()));
    if (attempt > 0 || batches > 0) {
      label.continuing(batches * legs.first().spec().batchSize());
    }
  }

  /**
   * Over all ranks, the batches from the point to where its trainer got ({@code store}'s states;
   * null: to the run's end), and the batches before the point.
   */
  private TrainReport.Spans spans(RestartPoint point, TrainStateStore store) throws IOException {
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
    return new TrainReport.Spans(
        new RankStart.Span(batches, real), new RankStart.Span(before, beforeReal));
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
    if (!"driver".equals(first.executor()) && !first.tail().equals(TrainerProcess.NO_OUTPUT)) {
      List<String> lines = first.tail().lines().toList();
      lines
          .subList(Math.max(0, lines.size() - TAIL_SHOWN), lines.size())
          .forEach(l -> System.out.println("[rank " + first.rank() + "] " + l));
    }
    TrainJob.say(
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
   * The run's error (the command line prints it after {@code spindle train failed: }): each failed
   * rank's account and last lines, whether restarts were left, the state directory.
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
    return m.append('\n').append(TrainJob.stateNote(store)).toString();
  }

  /** The deepest message in {@code e}'s causes: Spark wraps the one that says what happened. */
  static String rootMessage(Throwable e) {
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
}
