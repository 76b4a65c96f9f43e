package dev.spindle.spark.feed;

import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.spark.job.HadoopConf;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.progress.ProgressCounters;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.fs.FileUtil;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.broadcast.Broadcast;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * One rank of a {@code train} run: task {@code r} of a barrier stage with one task per rank starts
 * rank {@code r}'s training script beside the executor ({@link TrainerProcess}) with the
 * environment PyTorch's launchers set, then serves it every remaining epoch of the run, one leg per
 * epoch, exactly as {@code feed --serve} serves a rank ({@link RankServeTask#serveLeg}), and waits
 * for the script to exit.
 *
 * <pre>
 *  allGather: every rank's executor and host ─► MASTER_ADDR/PORT, LOCAL_RANK, LOCAL_WORLD_SIZE
 *  start state: the rank's state in the store (a restart), else the run's ─► SPINDLE_STATE
 *  trainer ─► per epoch: plan (from the state) ─► serveLeg ─► state at the epoch's end
 *  trainer exits 0 ─► the rank's outcome; anything else ─► TrainerExit in the store, task fails
 * </pre>
 *
 * <p>The task outlives no trainer: whatever ends it (an error, a cancelled stage, a hang past the
 * trainer timeout) kills the trainer's process group first, and the launcher kills the group itself
 * if this JVM dies. A restarted run (a new stage, see {@link TrainJob}) resumes each rank from the
 * state its trainer last saved. Shipped to executors; {@link #apply} runs on the task thread.
 */
final class TrainTask extends AbstractFunction1<Iterator<Integer>, Iterator<TrainRankResult>>
    implements Serializable {
  private final Broadcast<TrainInputs> inputs;
  private final FeedSettings settings;
  private final HadoopConf conf;
  private final ServeSettings serve;
  private final TrainSettings train;
  private final TrainStateStore store;
  private final String runId;
  private final ProgressCounters progress;

  TrainTask(
      Broadcast<TrainInputs> inputs,
      FeedSettings settings,
      HadoopConf conf,
      ServeSettings serve,
      TrainSettings train,
      TrainStateStore store,
      String runId,
      ProgressCounters progress) {
    this.progress = progress;
    this.inputs = inputs;
    this.settings = settings;
    this.conf = conf;
    this.serve = serve;
    this.train = train;
    this.store = store;
    this.runId = runId;
  }

  @Override
  public Iterator<TrainRankResult> apply(Iterator<Integer> ranks) {
    BarrierTaskContext ctx = BarrierTaskContext.get();
    if (ctx.stageAttemptNumber() > 0) {
      throw new IllegalStateException(
          "spindle train restarts failed ranks itself, from their"
              + " saved states (spark.spindle.train.maxRestarts); Spark's retry of the stage is not"
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
    RankStart start = RankStart.of(rank, places.world(), in, store.state(rank).orElse(null));
    LoaderState state = start.plan().stateAtStart();
    String startJson = start.trainerState();
    Path work = Files.createTempDirectory("spindle-train-rank" + rank + "-");
    try {
      Path stateIn = Files.writeString(work.resolve("state.json"), startJson);
      Path stateOut = work.resolve("state-out.json");
      Map<String, String> env = places.environment(rank, in, serve, train, stateIn, stateOut);
      env.put("SPINDLE_SOCKET", serve.socketFor(rank).toString());
      env.put(RunToken.ENV, serve.token().value());
      TrainerProcess trainer;
      try {
        trainer =
            TrainerProcess.start(
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
      TrainerWatch watch = new TrainerWatch(rank, trainer, ctx, stateOut, store);
      try {
        return serveEpochs(rank, start, trainer, watch);
      } catch (RuntimeException | IOException | InterruptedException e) {
        if (!ctx.isInterrupted() && isTimeout(e)) {
          trainer.dumpStacks(); // where it hung, into its last lines
        }
        trainer.kill();
        watch.close(); // its last copy of the state: the trainer can no longer move it on
        TrainerExit exit = failure(rank, state, trainer, e, ctx);
        store.saveExit(rank, exit.toJson());
        throw new IllegalStateException(exit.describe(), e);
      } finally {
        trainer.kill(); // nothing outlives the task
        watch.close();
      }
    } finally {
      FileUtil.fullyDelete(work.toFile()); // a temporary folder: what stays, the OS cleans
    }
  }

  private TrainRankResult serveEpochs(
      int rank, RankStart start, TrainerProcess trainer, TrainerWatch watch)
      throws IOException, InterruptedException {
    TrainInputs in = inputs.value();
    List<TrainRankResult.Leg> legs = new ArrayList<>();
    long waitNanos = 0;
    EpochPlan plan = start.plan();
    int from = start.position();
    while (true) {
      FeedInputs epoch = new FeedInputs(plan, in.manifest(), in.offsets());
      FeedTask feed = new FeedTask(runId, () -> epoch, settings, conf, progress);
      FeedSlice planned = new FeedSlice(rank, from, plan.batchesPerRank());
      TaskOutcome o = RankServeTask.serveLeg(feed, serve, planned, scope(), watch);
      legs.add(new TrainRankResult.Leg(plan.epoch(), o));
      if (o.served() != null) {
        waitNanos += o.served().trainerWaitNanos();
      }
      if (plan.epoch() + 1 >= in.endEpoch()) {
        break;
      }
      plan = plan.stateAtEnd().resume(in.manifest(), plan.worldSize());
      from = plan.rank(rank).firstBatch();
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
          code, "its trainer exited with status " + code + " after the run's last batch");
    }
    String finalState = store.state(rank).orElse(null);
    TrainerExit exit =
        new TrainerExit(
            rank,
            "ok",
            0,
            trainer.wallSeconds(),
            waitNanos / 1e9,
            in.endEpoch(),
            RankServeTask.host(),
            RankServeTask.executor(),
            trainer.pid(),
            "finished",
            "",
            System.currentTimeMillis());
    store.saveExit(rank, exit.toJson());
    return new TrainRankResult(exit, legs, finalState);
  }

  /** How the rank failed: the trainer's own failure, a hang, a cancelled task, or an error. */
  private static TrainerExit failure(
      int rank, LoaderState state, TrainerProcess trainer, Throwable e, BarrierTaskContext ctx) {
    String kind;
    int code = trainer.isAlive() ? -1 : trainer.exitCode();
    if (ctx.isInterrupted() || hasCause(e, TrainerWatch.TrainCancelled.class)) {
      kind = "stopped";
    } else if (hasCause(e, TrainerWatch.TrainerFailed.class)) {
      kind = "exit";
    } else if (isTimeout(e)) {
      kind = "timeout";
    } else {
      kind = "error";
    }
    String message =
        switch (kind) {
          case "timeout" ->
              "its trainer hung: "
                  + (hasCause(e, dev.spindle.gpu.ring.LeaseExpiredException.class)
                      ? "it held a batch for longer than the trainer timeout without asking for the next"
                      : e.getMessage())
                  + "; it was killed with its process group after its Python stacks"
                  + " were printed (spark.spindle.feed.trainerTimeoutSeconds, --trainer-timeout)";
          case "exit", "stopped" -> rootMessage(e);
          default -> e.toString();
        };
    return new TrainerExit(
        rank,
        kind,
        code,
        trainer.wallSeconds(),
        0,
        state.epoch(),
        RankServeTask.host(),
        RankServeTask.executor(),
        trainer.pid(),
        message,
        trainer.tail(),
        System.currentTimeMillis());
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
