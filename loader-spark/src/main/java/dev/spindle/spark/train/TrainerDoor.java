package dev.spindle.spark.train;

import dev.spindle.spark.serve.RankLeg;
import dev.spindle.spark.serve.ServedRank;
import dev.spindle.spark.serve.TaskOutcome;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Lets one rank's trainer into the legs of a {@code train} run, on a thread of its own, while the
 * task thread reads ahead: the task thread feeds each leg's batches into the rank's feeder as soon
 * as the previous leg's are fed and its trainer was let into it ({@link #enter}, {@link
 * #awaitAdmitted}), and this door, in order, waits until the trainer took the previous leg's END
 * ({@link RankLeg#finish}), waits for its HELLO for the next ({@link RankLeg#admit}) and serves it
 * from where the producer began. So the first batches decode while the trainer's interpreter
 * imports torch, and the next epoch's while it takes this epoch's last.
 *
 * <pre>
 *  task thread:  feed leg 0 ─► enter(1) feed leg 1 ─► … ─► enter(END), {@link #awaitDone}
 *  door thread:  admit 0, serve 0 ─► finish 0, admit 1, serve 1 ─► … ─► finish last
 * </pre>
 *
 * <p>A trainer whose HELLO states another resume point than the one the producer began at (its
 * script loaded another state than the one {@code train} gave it) is not served from the batches
 * read ahead: the door fails the leg's feeder with {@link Redirect}, and the task thread opens the
 * leg again from that point ({@link #redirect}). A failure on either side fails the rank's feeder,
 * so the other side stops too; the door's failure is the one reported ({@link #failure}).
 *
 * <p>Threads: {@link #enter}, {@link #redirect}, {@link #awaitDone} and {@link #close} on the task
 * thread; the rest on the door's.
 */
final class TrainerDoor implements AutoCloseable {
  /** One leg as the door handles it: the leg, and its producer's outcome once it is known. */
  static final class Entry {
    final RankLeg leg;
    final CompletableFuture<TaskOutcome> produced = new CompletableFuture<>();

    /** True once the door served the leg, false if it redirected it. */
    final CompletableFuture<Boolean> admitted = new CompletableFuture<>();

    Entry(RankLeg leg) {
      this.leg = leg;
    }
  }

  /**
   * The trainer asked for another start than the producer's: feed the leg again from {@code at}.
   */
  static final class Redirect extends RuntimeException {
    final int at;

    Redirect(int rank, int planned, int at) {
      super(
          "the trainer of rank "
              + rank
              + " resumes at batch "
              + at
              + ", not at "
              + planned
              + " where its batches were read ahead from; reading from "
              + at);
      this.at = at;
    }
  }

  private static final Entry END = new Entry(null);

  private final TrainerWatch watch;
  private final Legs served;
  private final BlockingQueue<Entry> entries = new LinkedBlockingQueue<>();
  private final Thread thread;
  private volatile Throwable failure;
  private volatile Redirect redirect;
  private volatile boolean done;

  /** What the door reports for each leg the trainer finished, in order. */
  interface Legs {
    void finished(RankLeg leg, TaskOutcome outcome, long connectedNanos);
  }

  TrainerDoor(int rank, TrainerWatch watch, Legs served) {
    this.watch = watch;
    this.served = served;
    this.thread = new Thread(this::run, "spindle-trainer-door-" + rank);
    thread.setDaemon(true);
    thread.start();
  }

  /** The producer begins feeding {@code leg}; the door serves it in turn. Task thread. */
  Entry enter(RankLeg leg) {
    Entry e = new Entry(leg);
    entries.add(e);
    return e;
  }

  /** Whether the door redirected the leg being fed (not taking the redirect). Task thread. */
  boolean redirected() {
    return redirect != null;
  }

  /** The leg the door redirected (taking the redirect), or null. Task thread. */
  Redirect redirect() {
    Redirect r = redirect;
    redirect = null;
    return r;
  }

  /**
   * The door's failure (the trainer's, or a wait that timed out), or null. Any thread. Unchecked:
   * the door catches only those.
   */
  Throwable failure() {
    return failure;
  }

  /**
   * Waits until the door served {@code e} (true) or redirected it (false): the task thread feeds no
   * leg ahead of one the trainer has not been let into, so a redirect is always of the leg it feeds
   * (one whose batches all fit in the ring is fed before its trainer says hello). Throws the door's
   * failure, or {@link IllegalStateException} if the door stopped.
   */
  boolean awaitAdmitted(Entry e) throws InterruptedException {
    while (true) {
      try {
        return e.admitted.get(100, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException | ExecutionException x) {
        throwFailure();
        if (!thread.isAlive()) {
          throw new IllegalStateException("the trainer door stopped before it let the trainer in");
        }
      }
    }
  }

  /**
   * Waits until the trainer took the last leg's END: every leg entered is served and finished.
   * Throws the door's failure (unchecked: a trainer's, or a wait that timed out), if it failed.
   */
  void awaitDone() throws InterruptedException {
    entries.add(END);
    thread.join();
    throwFailure();
    if (!done) {
      throw new IllegalStateException("the trainer door stopped before the run's end");
    }
  }

  /** Throws the door's failure, if it failed (unchecked: the door catches only those). */
  private void throwFailure() {
    if (failure instanceof RuntimeException r) {
      throw r;
    }
    if (failure instanceof Error r) {
      throw r;
    }
  }

  /** Stops the door (the task is ending, or failed). Idempotent. */
  @Override
  public void close() {
    thread.interrupt();
  }

  private void run() {
    Entry last = null;
    RankLeg current = null;
    try {
      while (true) {
        Entry e = entries.take();
        if (last != null) { // the trainer takes this leg's END before its HELLO for the next
          current = last.leg;
          finish(last);
          last = null;
        }
        if (e == END) {
          done = true;
          return;
        }
        current = e.leg;
        long resume = e.leg.admit(watch);
        if (resume >= 0 && resume != e.leg.start()) {
          Redirect r = new Redirect(e.leg.rank(), e.leg.start(), Math.toIntExact(resume));
          redirect = r;
          e.leg.abandon(r); // its producer stops; the task thread enters the leg again
          e.admitted.complete(false);
          continue;
        }
        e.leg.serve(e.leg.start());
        e.admitted.complete(true);
        last = e;
      }
    } catch (InterruptedException e) {
      // closed: the task ends
    } catch (RuntimeException | Error e) {
      // said before the feeder fails: the task thread, stopped by that, reports this failure
      failure = current == null ? e : current.describe(e);
      if (current != null) {
        current.stop(e);
      }
    }
  }

  private void finish(Entry e) throws InterruptedException {
    ServedRank s = e.leg.finish(watch);
    TaskOutcome o;
    try {
      o = e.produced.get(); // fed before its END could be taken: at most a moment away
    } catch (ExecutionException x) {
      throw new IllegalStateException("the producer of a finished leg failed", x.getCause());
    }
    served.finished(e.leg, e.leg.outcome(o, s), watch.connectedNanos());
  }
}
