package dev.spindle.spark.train;

import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.progress.ProgressCounters;
import dev.spindle.spark.samples.DecodeWarmUp;
import dev.spindle.spark.serve.BatchRun;
import dev.spindle.spark.serve.FeedInputs;
import dev.spindle.spark.serve.FeedSettings;
import dev.spindle.spark.serve.FeedSlice;
import dev.spindle.spark.serve.FeedTask;
import dev.spindle.spark.serve.RankLeg;
import dev.spindle.spark.serve.RankServeTask;
import dev.spindle.spark.serve.ServeSettings;
import dev.spindle.spark.serve.TaskOutcome;
import dev.spindle.spark.shard.HadoopConf;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.fs.FileUtil;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.broadcast.Broadcast;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * One rank of a {@code train} run: task {@code r} of a barrier stage with one task per rank starts
 * rank {@code r}'s training script beside the executor ({@link TrainerProcess}) with the
 * environment PyTorch's launchers set, then serves it every remaining epoch of the run, one leg per
 * epoch, as {@code feed --serve} serves a rank ({@link RankLeg}), and waits for the script to exit.
 * Unlike {@code feed --serve}, which learns where a trainer starts from its HELLO before it reads,
 * the task knows where its trainer starts (it gave it that state) and reads ahead: the first
 * batches decode while the script imports torch, and each epoch's first while the trainer takes the
 * previous epoch's last ({@link TrainerDoor} lets the trainer in on a thread of its own); the next
 * epoch's plan and first group of samples are made ready while the current epoch's last rows decode
 * ({@link NextEpoch}), so the cores go from one epoch's decode to the next's without a pause.
 *
 * <pre>
 *  allGather: every rank's executor and host ─► MASTER_ADDR/PORT, LOCAL_RANK, LOCAL_WORLD_SIZE
 *  start: the attempt's RestartPoint for the rank (a checkpoint's state, else the run's)
 *    ─► SPINDLE_STATE, SPINDLE_CHECKPOINT
 *  per epoch: plan (from the state) ─► feed the leg (task thread, ahead of the trainer)
 *    its samples all read ─► the next plan and its first read group (a thread of its own)
 *    TrainerDoor: the previous leg's END taken ─► HELLO ─► serve from the leg's first batch
 *  trainer exits 0 ─► the rank's outcome
 *  the trainer fails, hangs, or another rank's failure is recorded ─► TrainerExit in the store,
 *    the rank's outcome (a trainer's failure ends its task normally: the driver restarts or
 *    fails the run, and Spark prints no task failure); a failure of the task itself fails it
 * </pre>
 *
 * <p>The task outlives no trainer: whatever ends it (an error, a cancelled stage, a hang past the
 * trainer timeout, another rank's failure) kills the trainer's process group first, and the
 * launcher kills the group itself if this JVM dies. A restarted run (a new stage, see {@link
 * TrainJob}) resumes each rank from its {@link RestartPoint}. Shipped to executors; {@link #apply}
 * runs on the task thread.
 */
final class TrainTask extends AbstractFunction1<Iterator<Integer>, Iterator<TrainRankResult>>
    implements Serializable {
  private static final Logger LOG = LoggerFactory.getLogger(TrainTask.class);

  private final Broadcast<TrainInputs> inputs;
  private final FeedSettings settings;
  private final HadoopConf conf;
  private final ServeSettings serve;
  private final TrainSettings train;
  private final TrainStateStore store;
  private final String runId;
  private final ProgressCounters progress;
  private final int attempt;
  private final RestartPoint start;

  TrainTask(
      Broadcast<TrainInputs> inputs,
      FeedSettings settings,
      HadoopConf conf,
      ServeSettings serve,
      TrainSettings train,
      TrainStateStore store,
      String runId,
      ProgressCounters progress,
      int attempt,
      RestartPoint start) {
    this.progress = progress;
    this.inputs = inputs;
    this.settings = settings;
    this.conf = conf;
    this.serve = serve;
    this.train = train;
    this.store = store;
    this.runId = runId;
    this.attempt = attempt;
    this.start = start;
  }

  /** This task for attempt {@code attempt} of the run, every rank starting at {@code start}. */
  TrainTask forAttempt(int attempt, RestartPoint start) {
    return new TrainTask(
        inputs, settings, conf, serve, train, store, runId, progress, attempt, start);
  }

  @Override
  public Iterator<TrainRankResult> apply(Iterator<Integer> ranks) {
    BarrierTaskContext ctx = BarrierTaskContext.get();
    if (ctx.stageAttemptNumber() > 0) {
      throw new IllegalStateException(
          "spindle train restarts failed ranks itself, from their"
              + " checkpoints (spark.spindle.train.maxRestarts); Spark's retry of the stage is not"
              + " run");
    }
    List<TrainRankResult> out = new ArrayList<>();
    while (ranks.hasNext()) {
      int rank = ranks.next();
      TrainRendezvous places = TrainRendezvous.meet(ctx, rank, train.nprocPerExecutor());
      try {
        out.add(runRank(ctx, rank, places));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while training rank " + rank, e);
      }
    }
    return CollectionConverters.asScala(out.iterator());
  }

  private TrainRankResult runRank(BarrierTaskContext ctx, int rank, TrainRendezvous places)
      throws IOException, InterruptedException {
    TrainInputs in = inputs.value();
    RestartPoint.Rank begin = start.ranks().get(rank);
    RankStart rankStart = RankStart.of(rank, places.world(), in, begin.state());
    LoaderState state = rankStart.plan().stateAtStart();
    Path work = Files.createTempDirectory("spindle-train-rank" + rank + "-");
    try {
      Path stateIn = Files.writeString(work.resolve("state.json"), rankStart.trainerState());
      Path stateOut = work.resolve("state-out.json");
      Path checkpointOut = work.resolve("checkpoint-record.json");
      Map<String, String> env = places.environment(rank, in, serve, train, stateIn, stateOut);
      env.put("SPINDLE_SOCKET", serve.socketFor(rank).toString());
      env.put(RunToken.ENV, serve.token().value());
      env.put("SPINDLE_CHECKPOINT_OUT", checkpointOut.toString());
      env.put("SPINDLE_CHECKPOINT", begin.checkpoint() == null ? "" : begin.checkpoint());
      if (settings.hasImage()) {
        DecodeWarmUp.start(); // an executor's decoder loads while the script imports torch
      }
      RankLeg.listen(serve, rank, rankStart.plan().worldSize()); // before its trainer connects
      TrainerProcess trainer = startTrainer(rank, env, state);
      TrainerWatch watch =
          new TrainerWatch(rank, trainer, ctx, stateOut, checkpointOut, store, runId, attempt);
      Served served = new Served();
      try {
        return serveEpochs(rank, rankStart, trainer, watch, served);
      } catch (RuntimeException | IOException | InterruptedException e) {
        return failed(ctx, rank, state, trainer, watch, served, e);
      } finally {
        trainer.kill(); // nothing outlives the task
        watch.close();
      }
    } finally {
      FileUtil.fullyDelete(work.toFile()); // a temporary folder: what stays, the OS cleans
    }
  }

  private TrainerProcess startTrainer(int rank, Map<String, String> env, LoaderState state)
      throws IOException, InterruptedException {
    try {
      return TrainerProcess.start(
          rank,
          train.python(),
          train.script(),
          train.args(),
          env,
          "driver".equals(RankServeTask.executor()));
    } catch (IOException e) {
      store.saveExit(
          rank,
          new TrainerExit(
                  rank,
                  "error",
                  -1,
                  0,
                  0,
                  state.epoch(),
                  RankServeTask.host(),
                  RankServeTask.executor(),
                  -1,
                  e.getMessage(),
                  "(not started)",
                  System.currentTimeMillis())
              .toJson());
      throw e;
    }
  }

  /**
   * Ends the rank after {@code e}: its trainer killed, its account in the store. A trainer's own
   * failure (or a stop for another rank's) ends the task normally, with the account as its outcome,
   * after recording the attempt's failure for the other ranks; anything else fails it.
   */
  private TrainRankResult failed(
      BarrierTaskContext ctx,
      int rank,
      LoaderState state,
      TrainerProcess trainer,
      TrainerWatch watch,
      Served served,
      Throwable e)
      throws IOException {
    if (!ctx.isInterrupted() && isTimeout(e)) {
      trainer.dumpStacks(); // where it hung, into its last lines
    }
    trainer.kill();
    watch.close(); // its last copies of the state: the trainer can no longer move it on
    TrainerExit exit = failure(rank, state, trainer, e, ctx, watch, served.waitNanos());
    store.saveExit(rank, exit.toJson());
    LOG.debug("The task of rank {} ends: {}", rank, exit.message(), e);
    if (exit.kind().equals("error") || ctx.isInterrupted()) {
      throw new IllegalStateException(exit.describe(), e);
    }
    if (exit.cause()) {
      store.saveFailure(runId, attempt, exit.toJson()); // the other ranks stop
    }
    return served.result(exit, store.state(rank).orElse(null));
  }

  private TrainRankResult serveEpochs(
      int rank, RankStart start, TrainerProcess trainer, TrainerWatch watch, Served served)
      throws IOException, InterruptedException {
    TrainInputs in = inputs.value();
    Epoch epoch = new Epoch(start.plan(), feedTask(start.plan()), start.position(), null);
    RankLeg last = null;
    try (TrainerDoor door =
        new TrainerDoor(
            rank, watch, (leg, o, connected) -> served.leg(leg.epoch(), o, connected))) {
      while (true) {
        boolean more = epoch.plan().epoch() + 1 < in.endEpoch();
        NextEpoch next = more ? new NextEpoch(rank, epoch.plan()) : null;
        last = feedLeg(door, epoch, rank, next == null ? null : next::start);
        if (!more) {
          break;
        }
        epoch = next.take();
      }
      door.awaitDone();
    } finally {
      if (last != null) {
        last.release();
      }
    }
    watch.servingDone();
    if (!trainer.awaitExit(serve.trainerTimeout())) {
      throw new IllegalStateException(
          "its trainer took every batch of the run but did not exit"
              + " within "
              + serve.trainerTimeout().toSeconds()
              + " s"
              + " (spark.spindle.feed.trainerTimeoutSeconds)",
          new TimeoutException("exit"));
    }
    watch.close();
    int code = trainer.exitCode();
    if (code != 0) {
      throw new TrainerWatch.TrainerFailed(
          code, false, "its trainer exited with status " + code + " after the run's last batch");
    }
    String finalState = store.state(rank).orElse(null);
    TrainerExit exit =
        new TrainerExit(
            rank,
            "ok",
            0,
            trainer.wallSeconds(),
            served.waitNanos() / 1e9,
            in.endEpoch(),
            RankServeTask.host(),
            RankServeTask.executor(),
            trainer.pid(),
            "finished",
            "",
            System.currentTimeMillis());
    store.saveExit(rank, exit.toJson());
    return served.result(exit, finalState);
  }

  /**
   * Feeds the rank's batches {@code from..end-1} of {@code feed}'s plan into its feeder, reading
   * ahead of the trainer, which {@code door} lets in; feeds the leg again from where the door
   * redirects it (the trainer resumes elsewhere). Runs {@code whenRead} (may be null) once the
   * leg's samples were all read. Returns the leg last fed. Task thread.
   */
  private RankLeg feedLeg(TrainerDoor door, Epoch epoch, int rank, Runnable whenRead)
      throws IOException, InterruptedException {
    String scope = scope();
    int from = epoch.from();
    int end = epoch.plan().batchesPerRank();
    for (int redirects = 0; ; redirects++) {
      RankLeg leg = RankLeg.open(epoch.feed(), serve, rank, from, end);
      TrainerDoor.Entry entry = door.enter(leg);
      TaskOutcome fed;
      try {
        // a redirected leg's batches were handed over to a feeder no trainer reads: again
        String s = redirects == 0 ? scope : scope + "/r" + redirects;
        fed = leg.feed(from, s, epoch.first(), whenRead);
      } catch (RuntimeException | Error | IOException | InterruptedException e) {
        if (!door.redirected() || door.failure() != null || e instanceof InterruptedException) {
          throw RankLeg.rethrown(door.failure() != null ? door.failure() : leg.fail(e));
        }
        fed = null; // the door redirected the leg while it was fed
      }
      // a leg whose batches all fitted in the ring was fed before the HELLO: redirected after
      if (fed == null || !door.awaitAdmitted(entry)) {
        TrainerDoor.Redirect r = door.redirect();
        LOG.info("Rank {}, epoch {}: {}", rank, leg.epoch(), r.getMessage());
        from = r.at;
        continue;
      }
      entry.produced.complete(fed);
      return leg;
    }
  }

  private FeedTask feedTask(EpochPlan plan) {
    FeedInputs epoch = new FeedInputs(plan, inputs.value().manifest(), inputs.value().offsets());
    return new FeedTask(runId, () -> epoch, settings, conf, progress);
  }

  /**
   * One epoch of the rank: its plan, the task that feeds it, the batch its leg starts at and the
   * rows read ahead for that leg (or null).
   */
  private record Epoch(EpochPlan plan, FeedTask feed, int from, FeedTask.ReadAhead first) {}

  /**
   * The rank's next epoch, made ready on a thread of its own once the current leg's samples were
   * all read ({@link #start}, on the leg's source thread), while its last rows decode: the next
   * plan, its feed task and its first group of samples read ({@link FeedTask#readAhead}). So the
   * next leg decodes as soon as it opens, instead of computing its plan and waiting for its first
   * reads between two epochs, both cores idle. A read ahead that failed is not used: the leg reads
   * its samples itself and reports what fails.
   */
  private final class NextEpoch {
    private final int rank;
    private final EpochPlan current;
    private final AtomicBoolean started = new AtomicBoolean();
    private final CompletableFuture<Epoch> ready = new CompletableFuture<>();

    NextEpoch(int rank, EpochPlan current) {
      this.rank = rank;
      this.current = current;
    }

    /** Starts making the next epoch ready (once; later calls do nothing). Any thread. */
    void start() {
      if (!started.compareAndSet(false, true)) {
        return;
      }
      Thread t =
          new Thread(
              () -> {
                try {
                  Epoch e = prepare();
                  ready.complete(new Epoch(e.plan(), e.feed(), e.from(), readAhead(e)));
                } catch (RuntimeException | Error x) {
                  ready.completeExceptionally(x);
                }
              },
              "spindle-read-ahead-" + rank);
      t.setDaemon(true);
      t.start();
    }

    /**
     * The next epoch: the one made ready, or (not started, or failed) one made now. Task thread.
     */
    Epoch take() throws InterruptedException {
      if (started.get()) {
        try {
          return ready.get();
        } catch (ExecutionException x) {
          LOG.debug("Rank {}: making the next epoch ready failed; again here", rank, x);
        }
      }
      return prepare(); // on the task thread: what failed there fails the task
    }

    /** {@code e}'s first group of samples, or null if reading it failed (the leg reads again). */
    private FeedTask.ReadAhead readAhead(Epoch e) {
      List<FeedSlice> slices = RankLeg.slices(rank, e.from(), e.plan().batchesPerRank());
      try {
        return e.feed().readAhead(slices);
      } catch (RuntimeException x) {
        LOG.debug(
            "Rank {}: reading epoch {} ahead failed; its leg reads it", rank, e.plan().epoch(), x);
        return null;
      }
    }

    private Epoch prepare() {
      TrainInputs in = inputs.value();
      EpochPlan plan = current.stateAtEnd().resume(in.manifest(), current.worldSize());
      return new Epoch(plan, feedTask(plan), plan.rank(rank).firstBatch(), null);
    }
  }

  /**
   * What the rank's legs served so far, and its trainer's time on them: the trainer door adds each
   * leg as its trainer finishes it; the task thread reads them when the rank ends.
   */
  private static final class Served {
    private final List<TrainRankResult.Leg> legs = new ArrayList<>();
    private long waitNanos;
    private long steps;
    private long busyNanos;

    /** A leg served to its end, its trainer connected at {@code connectedNanos}. Any thread. */
    synchronized void leg(int epoch, TaskOutcome o, long connectedNanos) {
      legs.add(new TrainRankResult.Leg(epoch, o));
      long wait = o.served() == null ? 0 : o.served().trainerWaitNanos();
      waitNanos += wait;
      long batches = 0;
      for (BatchRun b : o.runs()) {
        batches += b.batches();
      }
      if (batches > 0 && connectedNanos != 0) {
        steps += batches;
        busyNanos += Math.max(0, System.nanoTime() - connectedNanos - wait);
      }
    }

    synchronized long waitNanos() {
      return waitNanos;
    }

    synchronized TrainRankResult result(TrainerExit exit, String finalState) {
      return new TrainRankResult(exit, legs, finalState, steps, busyNanos);
    }
  }

  /**
   * How the rank failed: the trainer's own failure (before or after it connected), a hang, a stop
   * (another rank failed, the task was cancelled), or an error.
   */
  private static TrainerExit failure(
      int rank,
      LoaderState state,
      TrainerProcess trainer,
      Throwable e,
      BarrierTaskContext ctx,
      TrainerWatch watch,
      long waitNanos) {
    String kind = kind(e, ctx, watch);
    int code = trainer.isAlive() ? -1 : trainer.exitCode();
    String message =
        switch (kind) {
          case "timeout" ->
              "its trainer hung: "
                  + (hasCause(e, dev.spindle.gpu.ring.LeaseExpiredException.class)
                      ? "it held a batch for longer than the trainer timeout without asking for the next"
                      : e.getMessage())
                  + "; it was killed with its process group after its Python stacks"
                  + " were printed (spark.spindle.feed.trainerTimeoutSeconds, --trainer-timeout)";
          case "stopped" ->
              watch.stoppedBy() != null
                  ? "stopped: rank " + watch.stoppedBy().rank() + " failed"
                  : rootMessage(e);
          case "exit", "start" -> rootMessage(e);
          default -> e.toString();
        };
    return new TrainerExit(
        rank,
        kind,
        code,
        trainer.wallSeconds(),
        waitNanos / 1e9,
        state.epoch(),
        RankServeTask.host(),
        RankServeTask.executor(),
        trainer.pid(),
        message,
        trainer.tail(),
        System.currentTimeMillis());
  }

  private static String kind(Throwable e, BarrierTaskContext ctx, TrainerWatch watch) {
    if (ctx.isInterrupted()
        || watch.stoppedBy() != null
        || hasCause(e, TrainerWatch.TrainCancelled.class)) {
      return "stopped";
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof TrainerWatch.TrainerFailed f) {
        return f.beforeConnecting ? "start" : "exit";
      }
    }
    return isTimeout(e) ? "timeout" : "error";
  }

  private static boolean isTimeout(Throwable e) {
    return hasCause(e, TimeoutException.class)
        || hasCause(e, dev.spindle.gpu.ring.LeaseExpiredException.class);
  }

  /** The message of the watch's own failure in {@code e}'s causes, else {@code e}'s. */
  private static String rootMessage(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof TrainerWatch.TrainerFailed || t instanceof TrainerWatch.TrainCancelled) {
        return t.getMessage();
      }
    }
    return e.getMessage();
  }

  private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  private String scope() {
    BarrierTaskContext ctx = BarrierTaskContext.get();
    return runId + "/attempt-" + (ctx == null ? 0 : ctx.taskAttemptId());
  }
}
