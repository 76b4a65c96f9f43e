package dev.spindle.gpu.ring;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * The lease deadlines of one {@link PrefetchRing} and how its blocking calls wait for them: each
 * lease gets a unique id and a deadline one lease timeout from when it was given; a waiter sleeps
 * at most until the earliest deadline of the slots now leased (and at least 1 ms), so that a lease
 * held too long is found while nothing else happens, and then fails the ring instead of deadlocking
 * it.
 *
 * <p>Threads: not thread-safe on its own; called only under the ring's lock (which {@link #await}
 * releases while it waits, as {@link Condition#awaitNanos} does). Reads the lease fields of the
 * ring's slots, which stay the ring's; owns only the next lease id.
 */
final class LeaseDeadlines<P> {
  private final List<Slot<P>> slots;
  private final long timeoutNanos;
  private long nextId;

  LeaseDeadlines(List<Slot<P>> slots, long timeoutNanos) {
    this.slots = slots;
    this.timeoutNanos = timeoutNanos;
  }

  /** Gives {@code s}, just LEASED, its lease: the next id, a deadline, the caller's thread name. */
  Lease<P> lease(Slot<P> s) {
    long id = nextId++;
    long deadline = System.nanoTime() + timeoutNanos;
    s.lease(id, deadline, Thread.currentThread().getName());
    return new Lease<>(s, id, s.sequence(), deadline);
  }

  /**
   * Waits on {@code c} for at most {@code remainingNanos}, waking by the earliest lease deadline;
   * returns the time still left of {@code remainingNanos} (the caller then looks for {@link
   * #expired} leases).
   */
  long await(Condition c, long remainingNanos) throws InterruptedException {
    long now = System.nanoTime();
    long wait = Math.min(remainingNanos, untilEarliestDeadline(now));
    long left = c.awaitNanos(Math.max(wait, 1));
    return remainingNanos - (wait - left);
  }

  private long untilEarliestDeadline(long now) {
    long min = Long.MAX_VALUE;
    for (Slot<P> s : slots) {
      if (s.state() == SlotState.LEASED) {
        min = Math.min(min, s.leaseDeadlineNanos() - now);
      }
    }
    return Math.max(min, 1_000_000L);
  }

  /**
   * The failure for the first leased slot past its deadline at {@code now}, naming the batch and
   * the thread that holds it; null while every lease is in time.
   */
  LeaseExpiredException expired(long now) {
    for (Slot<P> s : slots) {
      if (s.state() == SlotState.LEASED && now - s.leaseDeadlineNanos() > 0) {
        return new LeaseExpiredException(
            "Lease on batch #"
                + s.sequence()
                + " (slot "
                + s.index()
                + ") held by thread '"
                + s.holder()
                + "' was not released within "
                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                + " ms; close the DeviceBatch"
                + " (try-with-resources) or raise the lease timeout");
      }
    }
    return null;
  }
}
