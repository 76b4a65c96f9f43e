package dev.spindle.spark.serve;

import static java.util.stream.Collectors.joining;

import dev.spindle.gpu.bridge.BridgeServer;
import dev.spindle.gpu.bridge.BridgeServer.HeldBatches;
import dev.spindle.gpu.bridge.RankFeed;
import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.gpu.device.NormalizeSpec;
import dev.spindle.gpu.feed.FeederConfig;
import dev.spindle.gpu.feed.GpuFeeder;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.samples.BatchImages;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

/**
 * One leg of a served rank (one epoch's batches {@code from..end-1} of one rank, or the rest of
 * them after a resume) split into the steps that {@link RankServeTask#serveLeg} takes one after the
 * other and {@code train} overlaps: the producer (the task thread) {@link #feed feeds} the rank's
 * feeder while the trainer's side ({@link #admit}, {@link #serve}, {@link #finish}: another thread
 * may take them) waits for the trainer's HELLO, serves it, and waits until it took the leg's END.
 *
 * <pre>
 *  open: the bridge (per socket), the rank's feeder, the feeder's sequence now (the leg's base)
 *  admit ─► the trainer's resume point        feed(from..end) ─► the feeder's ring (backpressure)
 *  serve(start): batch start = the feeder's batch of sequence base (the producer may be ahead)
 *  finish: the trainer took END ─► ServedRank (its wait, the feeder's counters)
 * </pre>
 *
 * <p>Because {@link #serve} names the feeder sequence the leg began at, a producer may run ahead of
 * the trainer: before it connects (its interpreter and torch start while the first batches decode)
 * and while it still takes the previous leg's last batches (whose channel stops at its own end).
 */
public final class RankLeg {
  private final FeedTask feed;
  private final ServeSettings serve;
  private final EpochPlan plan;
  private final int rank;
  private final int end;
  private final Path socket;
  private final BridgeServer bridge;
  private final String state;
  private final GpuFeeder feeder;
  private final long base;
  private long copied;
  private long waitBefore;
  private long resume = -1;
  private int start;

  private RankLeg(FeedTask feed, ServeSettings serve, int rank, int from, int end) {
    this.feed = feed;
    this.serve = serve;
    this.plan = feed.inputs.value().plan();
    this.rank = rank;
    this.end = end;
    this.start = from;
    this.socket = serve.socketFor(rank);
    this.bridge =
        ExecutorServing.bridge(socket, plan.worldSize(), serve.trainerTimeout(), serve.token());
    this.state = plan.stateAtStart().toJson();
    this.feeder =
        ExecutorServing.feeder(
            rank, RankServeTask.ordinal(rank), serve.choice(), config(feed, serve, plan));
    this.base = feeder.stats().ring().published();
    this.waitBefore = feeder.stats().ring().consumerWaitNanos();
  }

  /**
   * The leg of {@code feed}'s plan that serves {@code rank}'s batches {@code from..end-1}, its
   * feeder taken (give it back with {@link #release}). Task thread.
   */
  public static RankLeg open(FeedTask feed, ServeSettings serve, int rank, int from, int end) {
    return new RankLeg(feed, serve, rank, from, Math.max(from, end));
  }

  /**
   * Has the bridge on {@code rank}'s socket listen for this run ({@code serve}'s token, {@code
   * world} ranks) before the rank's trainer starts: a bridge of an earlier run in this JVM on the
   * same socket would otherwise still answer, refusing a trainer fast enough to connect before the
   * run's first leg opens (a warm one). Task thread.
   */
  public static void listen(ServeSettings serve, int rank, int world) {
    ExecutorServing.bridge(serve.socketFor(rank), world, serve.trainerTimeout(), serve.token());
  }

  /** The rank. */
  public int rank() {
    return rank;
  }

  /** The epoch of the leg's plan. */
  public int epoch() {
    return plan.epoch();
  }

  /** The leg's first batch: its planned one until {@link #serve} says where the trainer starts. */
  public int start() {
    return start;
  }

  /** The number after the leg's last batch. */
  public int end() {
    return end;
  }

  /**
   * Waits for the rank's trainer to say hello for this leg and returns its resume point: -1, or a
   * batch in {@code 0..end} of a state of this leg's plan (others are refused and the wait goes
   * on). Waits in slices, checking {@code watch} between them; calls {@link
   * RankServeTask.Watch#connected} when it came. The trainer waits until {@link #serve}.
   */
  public long admit(RankServeTask.Watch watch) throws InterruptedException {
    long deadline = System.nanoTime() + serve.trainerTimeout().toNanos();
    long batches = plan.rank(rank).batches();
    while (true) {
      watch.check();
      long left = deadline - System.nanoTime();
      try {
        resume =
            bridge.awaitTrainer(
                rank,
                Duration.ofNanos(Math.max(1, Math.min(left, SLICE.toNanos()))),
                state,
                batches);
        watch.connected();
        return resume;
      } catch (TimeoutException e) {
        if (System.nanoTime() - deadline >= 0) {
          throw noTrainer(e);
        }
      }
    }
  }

  /**
   * Serves the waiting trainer from batch {@code start}, which the feeder's batch of the leg's base
   * sequence holds (the producer fed, or feeds, from there).
   */
  public void serve(int start) {
    this.start = start;
    this.waitBefore = feeder.stats().ring().consumerWaitNanos();
    bridge.serve(new RankFeed(rank, feeder, start, state, end), base);
  }

  /**
   * Produces the leg's batches {@code start..end-1} into the rank's feeder (blocking while its ring
   * is full: the trainer back-pressures the readers) under {@code scope}. Task thread.
   */
  public TaskOutcome feed(int start, String scope) throws IOException, InterruptedException {
    return feed(start, scope, null, null);
  }

  /** The leg's batches {@code start..end-1} as {@link #feed(int, String)} feeds them. */
  public static List<FeedSlice> slices(int rank, int start, int end) {
    return List.of(new FeedSlice(rank, start, end));
  }

  /**
   * {@link #feed(int, String)} from rows read ahead ({@code first}: {@link FeedTask#readAhead} of
   * {@link #slices}, or null), running {@code whenRead} (or nothing) once the leg's samples were
   * all read.
   */
  public TaskOutcome feed(int start, String scope, FeedTask.ReadAhead first, Runnable whenRead)
      throws IOException, InterruptedException {
    if (start >= end) {
      return TaskOutcome.empty();
    }
    long before = feeder.stats().hostCopyBytes(); // the next leg's producer copies after this one
    try {
      return feed.run(
          slices(rank, start, end),
          FeederConsumer.serving(plan, rank, feeder, serve.trainerTimeout()),
          scope,
          first,
          whenRead);
    } finally {
      copied = feeder.stats().hostCopyBytes() - before;
    }
  }

  /**
   * Waits until the trainer took every batch of the leg and its END, checking {@code watch} between
   * slices, and says how the leg was served.
   *
   * @throws IllegalStateException naming the rank when the trainer did not within the trainer
   *     timeout (holding a batch, or asking for none)
   */
  public ServedRank finish(RankServeTask.Watch watch) throws InterruptedException {
    long deadline = System.nanoTime() + serve.trainerTimeout().toNanos();
    while (true) {
      watch.check();
      long left = deadline - System.nanoTime();
      if (bridge.awaitFinished(
          rank, Duration.ofNanos(Math.max(0, Math.min(left, SLICE.toNanos()))))) {
        break;
      }
      if (System.nanoTime() - deadline >= 0) {
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
    }
    return new ServedRank(
        rank,
        start,
        resume,
        RankServeTask.executor(),
        RankServeTask.host(),
        bridge.socketPath().toString(),
        feeder.device().description(),
        feeder.stats().toJson(),
        feeder.stats().ring().consumerWaitNanos() - waitBefore);
  }

  /**
   * {@code o}, the leg's outcome, with what the feeder copied on the host while {@link #feed} ran
   * (the task thread's; read after {@link #finish}, which comes after it) and how it was served.
   */
  public TaskOutcome outcome(TaskOutcome o, ServedRank served) {
    return o.plusHostCopies(copied).withServed(served);
  }

  /**
   * Stops the leg after {@code e}: its feeder failed (a trainer gets FEEDER_FAILED and must
   * reconnect with its state), the rank no longer served. Returns the failure to throw: that the
   * trainer died or held a batch too long when it did, naming the rank, else {@code e}.
   */
  public Throwable fail(Throwable e) {
    Throwable t = describe(e);
    stop(e);
    return t;
  }

  /**
   * Throws {@code t}, a failure {@link #fail} returned, as what it is: unchecked, an {@link
   * IOException} or an {@link InterruptedException} (the leg's steps throw nothing else). Declared
   * to return one, so that callers can {@code throw rethrown(t)}.
   */
  public static IOException rethrown(Throwable t) throws IOException, InterruptedException {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error r) {
      throw r;
    }
    if (t instanceof InterruptedException r) {
      throw r;
    }
    throw (IOException) t;
  }

  /**
   * The failure to report for {@code e} ({@link #fail}'s answer), read before the leg is stopped:
   * stopping releases what the trainer held.
   */
  public Throwable describe(Throwable e) {
    String died = bridge.departedTrainer(rank);
    if (died != null) {
      return trainerDied(died, e);
    }
    if (waitedForTrainer(e)) {
      Optional<HeldBatches> held = bridge.heldBatches(rank);
      if (held.isPresent()) {
        return heldTooLong(serve, held.get(), plan.epoch());
      }
    }
    return e;
  }

  /** {@link #fail} without the description: fails the feeder with {@code e}, unserves the rank. */
  public void stop(Throwable e) {
    feeder.fail(e);
    bridge.unserve(rank);
  }

  /**
   * Fails the leg's feeder with {@code why} (its producer, blocked on a full ring, stops), without
   * touching the rank's service: the trainer has not been served this leg.
   */
  public void abandon(RuntimeException why) {
    feeder.fail(why);
  }

  /** Gives the rank's feeder back: its GPU may serve another rank. */
  public void release() {
    ExecutorServing.release(rank);
  }

  /** How long one wait lasts before the caller looks at its {@link RankServeTask.Watch} again. */
  private static final Duration SLICE = Duration.ofMillis(250);

  private IllegalStateException noTrainer(TimeoutException e) {
    return new IllegalStateException(
        "No trainer of rank "
            + rank
            + " connected to "
            + socket
            + " on "
            + RankServeTask.host()
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

  /**
   * The failure of a rank whose trainer died holding batches and was not replaced within the
   * trainer timeout: says so, naming the rank, instead of the ring's lease expiry it caused.
   */
  private IllegalStateException trainerDied(String died, Throwable e) {
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

  private static FeederConfig config(FeedTask feed, ServeSettings serve, EpochPlan plan) {
    BatchImages images = feed.settings().sample().images();
    FeederConfig c =
        FeederConfig.of(
                plan.spec().batchSize(),
                NormalizeSpec.raw(images.height(), images.width(), images.channels()))
            .withSlots(serve.slots())
            .withLeaseTimeout(serve.trainerTimeout())
            .withFields(FeederFields.of(feed.settings().sample()));
    // samples without an image (the declared fields have none): slots hold no image region
    return feed.settings().hasImage() ? c : c.withoutImages();
  }
}
