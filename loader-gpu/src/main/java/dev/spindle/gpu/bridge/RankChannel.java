package dev.spindle.gpu.bridge;

import dev.spindle.gpu.feed.DeviceBatch;
import dev.spindle.gpu.feed.GpuFeeder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One rank's stream of batches through the bridge: its feeder, the trainer that owns it now, and
 * the batches a departed trainer held (revoked from it, delivered first to the next trainer of the
 * rank, so the rank resumes exactly where its last trainer stopped). Batch numbers are absolute
 * positions in the rank's epoch: {@code firstBatch + feeder sequence - seqBase}, where {@code
 * seqBase} is the feeder's sequence when this channel began (a feeder may outlive one channel: the
 * batches of an earlier one that nobody took are dropped unseen); after {@code endBatch - 1} the
 * trainer gets END.
 *
 * <p>Threads: the owning session's thread, and the server's close; every method is synchronized.
 */
final class RankChannel {
  final int rank;
  final GpuFeeder feeder;
  final ServedMemory memory;
  final long firstBatch;
  final String loaderState;

  /** The plan identity of {@code loaderState}: a trainer's stated state must match it. */
  final String plan;

  private final long endBatch;
  private final long seqBase;
  private final ArrayDeque<DeviceBatch> pending = new ArrayDeque<>();
  private TrainerSession owner;

  /** How the last trainer left while holding batches, until the next one claims the rank. */
  private String departed;

  private long nextFromFeeder;
  private boolean ended;
  private boolean retired;

  RankChannel(RankFeed feed, ServedMemory memory) {
    this(feed, memory, 0);
  }

  RankChannel(RankFeed feed, ServedMemory memory, long seqBase) {
    this.rank = feed.rank();
    this.feeder = feed.feeder();
    this.memory = memory;
    this.firstBatch = feed.firstBatch();
    this.loaderState = feed.loaderState();
    this.plan = PlanIdentity.of(feed.loaderState());
    this.nextFromFeeder = feed.firstBatch();
    this.endBatch = feed.endBatch();
    this.seqBase = seqBase;
  }

  /**
   * Makes {@code s} the owner, waiting up to {@code grace} for the current owner to leave: a
   * trainer that reconnects right after its BYE (a new leg, a loaded state) may say hello before
   * its previous connection's thread has read the BYE and given the rank back. The current owner's
   * description if it still holds the rank after that.
   */
  synchronized String claim(TrainerSession s, Duration grace) throws InterruptedException {
    long deadline = System.nanoTime() + grace.toNanos();
    long left;
    while (owner != null && (left = deadline - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    if (owner != null) {
      return owner.toString();
    }
    owner = s;
    departed = null;
    return null;
  }

  /**
   * The rank's trainer now and the batches it holds, {@code pid 1234, connection 3} and {@code
   * [2]}, or null when no trainer holds a batch of the rank. Any thread.
   */
  Holder holder() {
    TrainerSession now;
    synchronized (this) {
      now = owner;
    }
    List<Long> held = now == null ? List.of() : now.held(); // outside this lock: see depart
    return held.isEmpty() ? null : new Holder(now.trainer(), held);
  }

  /** Who holds a rank's batches: the trainer ({@code pid 1234, connection 3}) and their numbers. */
  record Holder(String trainer, List<Long> batches) {}

  /** The number after the rank's last batch; {@link RankFeed#UNKNOWN_END} when not known. */
  long endBatch() {
    return endBatch;
  }

  /** The first batch not finished: what a new trainer of this rank receives first. */
  synchronized long position() {
    return pending.isEmpty() ? nextFromFeeder : number(pending.peekFirst());
  }

  /**
   * One step of a skip to {@code batch}: releases pending batches below it, then drops at most one
   * feeder batch below it (waiting at most {@code step} for it). True while batches below {@code
   * batch} may remain: the caller repeats, checking between steps whether to go on. A skip to a far
   * point (a feed of unknown length) thus never holds this channel for more than a step, and stops
   * when the caller stops.
   */
  synchronized boolean skipStep(long batch, Duration step) throws InterruptedException {
    while (!pending.isEmpty() && number(pending.peekFirst()) < batch) {
      pending.pollFirst().close();
    }
    if (nextFromFeeder >= batch || ended || retired) {
      return false;
    }
    try {
      DeviceBatch b = pull(step);
      if (b != null) {
        b.close();
      }
    } catch (TimeoutException e) {
      // the producer is slower than the skip: the caller tries again
    }
    return true;
  }

  /** The next batch: a revoked one first, then the feeder's; null at end of input. */
  synchronized DeviceBatch next(Duration timeout) throws TimeoutException, InterruptedException {
    if (retired) {
      throw new ProtocolException(
          BridgeError.FEEDER_FAILED,
          "Rank " + rank + "'s feed was stopped (its producer failed); restart the feed job");
    }
    if (!pending.isEmpty()) {
      return pending.pollFirst();
    }
    return ended ? null : pull(timeout);
  }

  /** The feeder's next batch of this channel (an earlier channel's are dropped); null at end. */
  private DeviceBatch pull(Duration timeout) throws TimeoutException, InterruptedException {
    while (true) {
      if (nextFromFeeder >= endBatch) {
        ended = true;
        return null;
      }
      DeviceBatch b = feeder.next(timeout);
      if (b == null) {
        ended = true;
        return null;
      }
      if (b.sequence() >= seqBase) {
        nextFromFeeder = number(b) + 1;
        return b;
      }
      b.close();
    }
  }

  /** True once the trainer was told END and no batch of this channel waits for one. */
  synchronized boolean finished() {
    return ended && pending.isEmpty();
  }

  /** Releases what waits for a trainer; later requests fail with FEEDER_FAILED. */
  synchronized void retire() {
    retired = true;
    releaseAll();
  }

  /** Ends {@code s}'s ownership; {@code held} (its unreleased batches) wait for the next owner. */
  synchronized void depart(TrainerSession s, Collection<DeviceBatch> held) {
    if (owner != s) {
      held.forEach(DeviceBatch::close);
      return;
    }
    if (!held.isEmpty()) {
      departed =
          "Trainer of rank "
              + rank
              + " ("
              + s
              + ") disconnected without BYE at "
              + java.time.Instant.now()
              + " holding batch(es) "
              + held.stream().map(this::number).sorted().toList()
              + ": it died (crashed or killed; its "
              + "exit status and log are where it was started)";
    }
    List<DeviceBatch> all = new java.util.ArrayList<>(pending);
    all.addAll(held);
    all.sort(Comparator.comparingLong(this::number));
    pending.clear();
    pending.addAll(all);
    owner = null;
    notifyAll(); // a trainer that said hello meanwhile may claim the rank now
  }

  /**
   * How the rank's last trainer left while holding batches (it died), or null when it ended with
   * BYE, or a trainer took the rank since.
   */
  synchronized String departed() {
    return departed;
  }

  /** Releases every revoked batch (server close). */
  synchronized void releaseAll() {
    while (!pending.isEmpty()) {
      pending.pollFirst().close();
    }
  }

  long number(DeviceBatch b) {
    return firstBatch + b.sequence() - seqBase;
  }
}
