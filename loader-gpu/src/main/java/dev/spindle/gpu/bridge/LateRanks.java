package dev.spindle.gpu.bridge;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The ranks of a {@link BridgeServer#listen} server, which producers serve one at a time while it
 * runs: the rank → channel map, and the trainers waiting in their handshake for their rank to be
 * served (with the resume point their HELLO stated, which the producer reads before it starts).
 *
 * <p>Threads: connection threads and producers; every method holds this object's monitor, which
 * also guards the rank map it is given ({@link ServedRanks}'s).
 */
final class LateRanks {
  private final Duration trainerWait;
  private final Map<Integer, Waiter> waiting = new HashMap<>();

  /**
   * A trainer in its handshake, waiting for its rank: what its HELLO stated, and the refusal its
   * rank's producer gave it (guarded by the LateRanks monitor).
   */
  private static final class Waiter {
    final long resume;
    final String plan;
    ProtocolException refusal;

    Waiter(long resume, String plan) {
      this.resume = resume;
      this.plan = plan;
    }
  }

  LateRanks(Duration trainerWait) {
    this.trainerWait = trainerWait;
  }

  synchronized void serve(int rank, RankChannel channel, Map<Integer, RankChannel> ranks) {
    RankChannel old = ranks.put(rank, channel);
    if (old != null) {
      old.retire();
    }
    waiting.remove(rank);
    notifyAll();
  }

  synchronized void unserve(int rank, Map<Integer, RankChannel> ranks) {
    RankChannel old = ranks.remove(rank);
    if (old != null) {
      old.retire();
    }
    notifyAll();
  }

  synchronized RankChannel channel(int rank, Map<Integer, RankChannel> ranks) {
    return ranks.get(rank);
  }

  /**
   * The rank's live channel; when there is none (never served, or its feed finished), waits for the
   * next one, registered as the rank's waiting trainer.
   */
  synchronized RankChannel awaitServed(
      int rank, long resume, String plan, Map<Integer, RankChannel> ranks, AtomicBoolean closed)
      throws InterruptedException {
    RankChannel seen = ranks.get(rank);
    if (seen != null && !seen.finished()) {
      return seen;
    }
    if (waiting.containsKey(rank)) {
      throw new ProtocolException(
          BridgeError.RANK_TAKEN, "Rank " + rank + " already has a trainer waiting for its feed");
    }
    Waiter me = new Waiter(resume, plan);
    waiting.put(rank, me);
    notifyAll();
    long deadline = System.nanoTime() + trainerWait.toNanos();
    try {
      while (true) {
        if (me.refusal != null) {
          throw me.refusal;
        }
        RankChannel now = ranks.get(rank);
        if (now != null && now != seen) {
          return now;
        }
        if (closed.get()) {
          throw new ProtocolException(BridgeError.FEEDER_FAILED, "The bridge is shutting down");
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new ProtocolException(
              BridgeError.BAD_RANK,
              "Rank "
                  + rank
                  + " is not served: "
                  + "no feed task for it started within "
                  + trainerWait.toSeconds()
                  + " s");
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    } finally {
      waiting.remove(rank, me);
    }
  }

  /**
   * The resume point of the rank's waiting trainer, once one waits whose resume point is -1 or in
   * {@code 0..batches} and whose state is of the plan {@code served} (a {@link PlanIdentity}); a
   * waiter that does not fit is refused (it gets its ERROR) and the wait goes on.
   */
  synchronized long awaitTrainer(
      int rank, Duration timeout, String served, long batches, AtomicBoolean closed)
      throws TimeoutException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Waiter w = waiting.get(rank);
      if (w != null && admitted(rank, w, served, batches)) {
        return w.resume;
      }
      if (closed.get()) {
        throw new IllegalStateException("The bridge is closed");
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException(
            "No trainer of rank " + rank + " said hello within " + timeout.toSeconds() + " s");
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /** Whether {@code w} may start the rank; else refuses it, wakes it, forgets it. */
  private boolean admitted(int rank, Waiter w, String served, long batches) {
    try {
      ResumeCheck.range(rank, w.resume, batches);
      ResumeCheck.plan(rank, served, w.resume, w.plan);
      return true;
    } catch (ProtocolException e) {
      w.refusal = e;
      waiting.remove(rank, w);
      notifyAll();
      return false;
    }
  }

  synchronized void wakeAll() {
    notifyAll();
  }

  synchronized void releaseAll(Map<Integer, RankChannel> ranks) {
    ranks.values().forEach(RankChannel::releaseAll);
  }
}
