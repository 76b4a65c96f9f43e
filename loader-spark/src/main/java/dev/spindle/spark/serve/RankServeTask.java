package dev.spindle.spark.serve;

import static java.util.stream.Collectors.joining;

import dev.spindle.gpu.bridge.BridgeServer;
import dev.spindle.gpu.bridge.BridgeServer.HeldBatches;
import dev.spindle.gpu.bridge.RankFeed;
import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.gpu.device.GpuAssignment;
import dev.spindle.gpu.device.NormalizeSpec;
import dev.spindle.gpu.feed.FeederConfig;
import dev.spindle.gpu.feed.GpuFeeder;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.samples.BatchImages;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.resource.ResourceInformation;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * One rank of a served epoch ({@code feed --serve}): task {@code r} of a barrier stage with one
 * task per rank streams rank {@code r}'s batches, in plan order, into the rank's feeder in this
 * executor, which the rank's trainer leases through this JVM's trainer bridge.
 *
 * <pre>
 *  bridge (ExecutorServing, per socket path) ─ awaitTrainer(r): the trainer's HELLO, resume k
 *  feeder (ExecutorServing: the task's GPU, or host shared memory) ─ bridge.serve(r, from k)
 *  FeedTask pipeline over batches [k, stop) ─► verify ─► feeder.offer (blocks: backpressure)
 *  bridge.awaitFinished(r): the trainer took every batch and got END ─► TaskOutcome + stats
 * </pre>
 *
 * <p>Why one long task per rank, in a barrier stage: a rank's trainer runs on one node and leases
 * from one feeder in one order, so all of a rank's batches must go, in plan order, to one
 * executor's feeder; one task per rank gives that without coordination between tasks, and its
 * thread is the one that blocks while the trainer is slow, so backpressure reaches the readers. The
 * barrier stage starts every rank together or none: DDP trainers advance in lockstep, and a rank
 * whose task waited for a free slot would stall all the others. The task waits for its trainer's
 * HELLO before it reads anything, so a trainer that resumes from its saved state (after it, or the
 * feed job, was restarted) is served from its resume point with index-level reads, without decoding
 * what it already consumed. It ends only when its trainer has taken every batch, so the job (and
 * the JVM that holds the feeders) outlives the rank's last batch.
 *
 * <p>On failure the feeder is failed (its trainer gets FEEDER_FAILED and must reconnect with its
 * state) and the rank is no longer served; a retried attempt delivers from the trainer's new resume
 * point. Shipped to executors; {@link #apply} runs on the Spark task thread.
 */
public final class RankServeTask
    extends AbstractFunction1<Iterator<FeedSlice>, Iterator<TaskOutcome>> implements Serializable {
  private final FeedTask feed;
  private final ServeSettings serve;
  private final String runId;

  public RankServeTask(FeedTask feed, ServeSettings serve, String runId) {
    this.feed = feed;
    this.serve = serve;
    this.runId = runId;
  }

  @Override
  public Iterator<TaskOutcome> apply(Iterator<FeedSlice> slices) {
    List<TaskOutcome> out = new ArrayList<>();
    while (slices.hasNext()) {
      try {
        out.add(serveRank(slices.next()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while serving", e);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return CollectionConverters.asScala(out.iterator());
  }

  private TaskOutcome serveRank(FeedSlice planned)
      throws java.io.IOException, InterruptedException {
    return serveLeg(feed, serve, planned, scope(), Watch.NONE);
  }

  /**
   * What a rank task checks while it waits for its trainer: {@link #check} throws when the wait is
   * pointless (the trainer process it started has died); {@link #connected} hears that the trainer
   * said hello. Called on the task thread.
   */
  public interface Watch {
    Watch NONE = () -> {};

    void check();

    /** The rank's trainer said hello: it got past its start. */
    default void connected() {}
  }

  /** How long one wait lasts before the task looks at its {@link Watch} again. */
  private static final Duration SLICE = Duration.ofMillis(250);

  /**
   * Serves the leg {@code planned} of {@code feed}'s plan to the rank's trainer: waits for its
   * HELLO, streams the batches from its resume point into the rank's feeder, waits until it took
   * the last. Task thread.
   */
  public static TaskOutcome serveLeg(
      FeedTask feed, ServeSettings serve, FeedSlice planned, String scope, Watch watch)
      throws java.io.IOException, InterruptedException {
    EpochPlan plan = feed.inputs.value().plan();
    int rank = planned.rank();
    Path socket = serve.socketFor(rank);
    BridgeServer bridge =
        ExecutorServing.bridge(socket, plan.worldSize(), serve.trainerTimeout(), serve.token());
    String state = plan.stateAtStart().toJson();
    long resume = awaitTrainer(feed, serve, bridge, rank, socket, state, watch);
    watch.connected();
    int start = startBatch(planned, resume);
    int end = Math.max(start, planned.toBatch());
    GpuFeeder feeder =
        ExecutorServing.feeder(rank, ordinal(rank), serve.choice(), config(feed, serve, plan));
    long waitBefore = feeder.stats().ring().consumerWaitNanos();
    long stagedBefore = feeder.stats().hostCopyBytes();
    try {
      bridge.serve(new RankFeed(rank, feeder, start, state, end));
      TaskOutcome o =
          start >= end
              ? TaskOutcome.empty()
              : feed.run(
                  List.of(new FeedSlice(rank, start, end)),
                  FeederConsumer.serving(plan, rank, feeder, serve.trainerTimeout()),
                  scope);
      if (!awaitFinished(bridge, rank, serve.trainerTimeout(), watch)) {
        throw bridge
            .heldBatches(rank)
            .map(h -> heldTooLong(serve, h, plan.epoch()))
            .orElseGet(
                () ->
                    new IllegalStateException(
                        "Trainer of rank "
                            + rank
                            + " on "
                            + socket
                            + " did not take the rank's last batches within "
                            + serve.trainerTimeout().toSeconds()
                            + " s (spark.spindle.feed.trainerTimeoutSeconds)",
                        new TimeoutException("the rank's end was not taken")));
      }
      return o.plusHostCopies(feeder.stats().hostCopyBytes() - stagedBefore)
          .withServed(
              new ServedRank(
                  rank,
                  start,
                  resume,
                  executor(),
                  host(),
                  bridge.socketPath().toString(),
                  feeder.device().description(),
                  feeder.stats().toJson(),
                  feeder.stats().ring().consumerWaitNanos() - waitBefore));
    } catch (RuntimeException | Error | java.io.IOException | InterruptedException e) {
      String died = bridge.departedTrainer(rank);
      var held = waitedForTrainer(e) ? bridge.heldBatches(rank) : Optional.<HeldBatches>empty();
      feeder.fail(e);
      bridge.unserve(rank);
      if (died != null) {
        throw trainerDied(serve, died, rank, socket, e);
      }
      if (held.isPresent()) {
        throw heldTooLong(serve, held.get(), plan.epoch());
      }
      throw e;
    } finally {
      ExecutorServing.release(rank);
    }
  }

  /**
   * The failure of a rank whose trainer died holding batches and was not replaced within the
   * trainer timeout: says so, naming the rank, instead of the ring's lease expiry it caused.
   */
  private static IllegalStateException trainerDied(
      ServeSettings serve, String died, int rank, Path socket, Throwable e) {
    IllegalStateException f =
        new IllegalStateException(
            died
                + "; no trainer of rank "
                + rank
                + " reconnected to "
                + socket
                + " within "
                + serve.trainerTimeout().toSeconds()
                + " s (spark.spindle.feed.trainerTimeoutSeconds), so rank "
                + rank
                + " failed");
    if (!leaseExpired(e)) {
      f.initCause(e); // another failure than the dead trainer's leases: keep it
    }
    return f;
  }

  /**
   * The failure of a rank whose trainer kept a batch past the trainer timeout (the feeder's lease
   * timeout) without releasing it: names the rank, the trainer's pid (as its HELLO stated it) and
   * the batch, instead of the ring's lease expiry, which speaks of Java's DeviceBatch. The cause is
   * a {@link TimeoutException}, which is what it is: the trainer timed out.
   */
  private static IllegalStateException heldTooLong(ServeSettings serve, HeldBatches h, int epoch) {
    String batches =
        h.batches().size() == 1
            ? "batch " + h.batches().get(0)
            : "batches " + h.batches().stream().map(String::valueOf).collect(joining(", "));
    return new IllegalStateException(
        "Trainer of rank "
            + h.rank()
            + " ("
            + h.trainer()
            + ") held "
            + batches
            + " of epoch "
            + epoch
            + " for longer than the trainer timeout of "
            + serve.trainerTimeout().toSeconds()
            + " s (spark.spindle.feed.trainerTimeoutSeconds, --trainer-timeout) without"
            + " releasing it: a trainer releases a batch when it asks for the next one or closes"
            + " its loader, so it is stuck in a step, or stopped iterating and kept its loader"
            + " open; rank "
            + h.rank()
            + " failed",
        new TimeoutException("batch not released within the trainer timeout"));
  }

  /**
   * Whether {@code e} is, or was caused by, a lease held past its deadline (the ring failed with it
   * on the task thread, or on the source thread that was claiming a slot).
   */
  private static boolean leaseExpired(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof dev.spindle.gpu.ring.LeaseExpiredException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code e} is the feed giving up on its trainer: a lease held past its deadline, or no
   * slot freed within the trainer timeout (the trainer asked for no batch, which would have
   * released its last). Another failure (a read timing out, say) is not the trainer's.
   */
  private static boolean waitedForTrainer(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof dev.spindle.gpu.ring.LeaseExpiredException
          || t instanceof FeederConsumer.TrainerTookNoBatch) {
        return true;
      }
    }
    return false;
  }

  /**
   * The resume point of the rank's trainer: -1, or within the rank's planned batches, from a state
   * of the plan of {@code state} (the state the rank is served from). Waits in slices, checking
   * {@code watch} between them.
   */
  private static long awaitTrainer(
      FeedTask feed,
      ServeSettings serve,
      BridgeServer bridge,
      int rank,
      Path socket,
      String state,
      Watch watch)
      throws InterruptedException {
    long deadline = System.nanoTime() + serve.trainerTimeout().toNanos();
    long batches = feed.inputs.value().plan().rank(rank).batches();
    while (true) {
      watch.check();
      long left = deadline - System.nanoTime();
      try {
        return bridge.awaitTrainer(
            rank, Duration.ofNanos(Math.max(1, Math.min(left, SLICE.toNanos()))), state, batches);
      } catch (TimeoutException e) {
        if (System.nanoTime() - deadline >= 0) {
          throw new IllegalStateException(
              "No trainer of rank "
                  + rank
                  + " connected to "
                  + socket
                  + " on "
                  + host()
                  + " within "
                  + serve.trainerTimeout().toSeconds()
                  + " s (spark.spindle.feed.trainerTimeoutSeconds): start it there with"
                  + " SpindleLoader('"
                  + socket
                  + "', rank="
                  + rank
                  + ", world_size="
                  + bridge.worldSize()
                  + ") and "
                  + RunToken.ENV
                  + " set to the contents of "
                  + bridge.tokenFile(),
              e);
        }
      }
    }
  }

  /** {@link BridgeServer#awaitFinished}, in slices, checking {@code watch} between them. */
  private static boolean awaitFinished(BridgeServer bridge, int rank, Duration timeout, Watch watch)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      watch.check();
      long left = deadline - System.nanoTime();
      if (bridge.awaitFinished(
          rank, Duration.ofNanos(Math.max(0, Math.min(left, SLICE.toNanos()))))) {
        return true;
      }
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
    }
  }

  /**
   * Where the rank starts: the trainer's resume point if it stated one, else the plan's. The bridge
   * admitted only a point in {@code 0..rank.batches()} (awaitTrainer), so it is an int.
   */
  static int startBatch(FeedSlice planned, long resume) {
    return resume < 0 ? planned.fromBatch() : Math.toIntExact(resume);
  }

  private static FeederConfig config(FeedTask feed, ServeSettings serve, EpochPlan plan) {
    BatchImages images = feed.settings().sample().images();
    return FeederConfig.of(
            plan.spec().batchSize(),
            NormalizeSpec.raw(images.height(), images.width(), images.channels()))
        .withSlots(serve.slots())
        .withLeaseTimeout(serve.trainerTimeout());
  }

  /** The task's GPU from Spark's resources (spread by rank over several), else GPU 0. */
  public static int ordinal(int rank) {
    TaskContext ctx = TaskContext.get();
    ResourceInformation gpu = ctx == null ? null : ctx.resourcesJMap().get("gpu");
    if (gpu == null || gpu.addresses().length == 0) {
      return 0;
    }
    return GpuAssignment.ordinalForTask(
        Arrays.asList(gpu.addresses()), System.getenv("CUDA_VISIBLE_DEVICES"), rank);
  }

  private String scope() {
    TaskContext ctx = TaskContext.get();
    return runId + "/attempt-" + (ctx == null ? 0 : ctx.taskAttemptId());
  }

  public static String executor() {
    SparkEnv env = SparkEnv.get();
    return env == null ? "?" : env.executorId();
  }

  public static String host() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }
}
