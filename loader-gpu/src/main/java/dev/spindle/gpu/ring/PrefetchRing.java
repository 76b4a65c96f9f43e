package dev.spindle.gpu.ring;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;

/**
 * A fixed set of slots cycling FREE → FILLING → STAGED → COPYING → READY → LEASED → FREE (see
 * {@link SlotState}). Fillers claim FREE slots and block when none is left (backpressure: memory is
 * bounded by the slot count); one copy thread moves STAGED slots to the device; consumers lease
 * READY slots in publication order and must release them before their deadline.
 *
 * <p>Calling pattern for fillers (claim → try → publish, abandon on failure):
 *
 * <pre>{@code
 * Slot<P> slot = ring.claim(timeout, unit);
 * boolean published = false;
 * try {
 *   fill(slot.payload());
 *   ring.publish(slot);
 *   published = true;
 * } finally {
 *   if (!published) ring.abandon(slot);
 * }
 * }</pre>
 *
 * <p>Threads: any number of fillers and consumers; exactly one copy thread calls {@link
 * #takeStaged}, {@link #pollStaged} and {@link #ready}. Hand-offs go through one lock, which also
 * gives the payload's memory effects happens-before from each owner to the next. Slots are created
 * once; the steady path allocates only the {@link Lease} record.
 *
 * <p>Lifecycle: OPEN → ENDED ({@link #endOfInput}: no more fills, consumers drain, then {@link
 * #lease} returns null) → CLOSED ({@link #close}); or FAILED ({@link #fail}, or a lease past its
 * deadline), after which every wait throws {@link RingFailedException} with the first cause.
 *
 * <p>This class is the ring's threading: its lock, conditions, blocking waits and timeouts. The
 * parts it holds under that lock: {@code SlotSequencer} (which slot goes to whom, transitions,
 * sequence numbers), {@code RingRun} (the lifecycle above), {@code LeaseDeadlines} (lease ids,
 * deadlines, and waits that wake for them) and {@code RingStats} (the counters).
 */
public final class PrefetchRing<P> implements AutoCloseable {
  private final List<Slot<P>> slots;
  private final SlotSequencer<P> sequencer;
  private final LeaseDeadlines<P> deadlines;
  private final RingRun run = new RingRun();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition freeAvailable = lock.newCondition();
  private final Condition stagedAvailable = lock.newCondition();
  private final Condition readyAvailable = lock.newCondition();
  private final Condition slotReturned = lock.newCondition();
  private final RingStats stats;

  /**
   * Creates {@code slotCount} slots with payloads from {@code payloads} (called once per index).
   *
   * @param leaseTimeout how long a consumer may hold a lease; longer fails the ring
   */
  public PrefetchRing(int slotCount, IntFunction<P> payloads, long leaseTimeout, TimeUnit unit) {
    if (slotCount <= 0) {
      throw new IllegalArgumentException("Invalid slot count: " + slotCount + " (must be > 0)");
    }
    if (leaseTimeout <= 0) {
      throw new IllegalArgumentException(
          "Invalid lease timeout: " + leaseTimeout + " (must be > 0)");
    }
    List<Slot<P>> all = new ArrayList<>(slotCount);
    for (int i = 0; i < slotCount; i++) {
      all.add(new Slot<>(i, payloads.apply(i)));
    }
    this.slots = List.copyOf(all);
    this.stats = new RingStats(slotCount, System.nanoTime());
    this.sequencer = new SlotSequencer<>(slots, stats);
    this.deadlines = new LeaseDeadlines<>(slots, unit.toNanos(leaseTimeout));
  }

  /** All slots, in index order (for the owner of the payloads, e.g. to free them at close). */
  public List<Slot<P>> slots() {
    return slots;
  }

  /**
   * Claims a FREE slot for filling (FREE → FILLING), waiting while none is free.
   *
   * @throws TimeoutException if no slot became free in time (the ring is full: backpressure)
   * @throws IllegalStateException after {@link #endOfInput} or {@link #close}
   * @throws RingFailedException after a failure
   */
  public Slot<P> claim(long timeout, TimeUnit unit) throws TimeoutException, InterruptedException {
    lock.lockInterruptibly();
    long start = System.nanoTime();
    try {
      long remaining = unit.toNanos(timeout);
      while (true) {
        expireLeases(System.nanoTime());
        run.checkAcceptingFills();
        Slot<P> s = sequencer.claim();
        if (s != null) {
          return s;
        }
        if (remaining <= 0) {
          throw new TimeoutException(
              "No free ring slot within "
                  + unit.toMillis(timeout)
                  + " ms: all "
                  + slots.size()
                  + " slots are in use (consumers too slow?)");
        }
        remaining = await(freeAvailable, remaining);
      }
    } finally {
      stats.producerBlockedNanos += System.nanoTime() - start;
      lock.unlock();
    }
  }

  /** Publishes a filled slot (FILLING → STAGED) and gives it the next sequence number. */
  public void publish(Slot<P> slot) {
    lock.lock();
    try {
      sequencer.publish(slot);
      stagedAvailable.signalAll();
      slotReturned.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Returns a slot whose filling failed (FILLING → FREE); the batch is not published. */
  public void abandon(Slot<P> slot) {
    lock.lock();
    try {
      sequencer.abandon(slot);
      freeAvailable.signalAll();
      slotReturned.signalAll();
      readyAvailable.signalAll(); // after end of input, this may have been the last batch due
    } finally {
      lock.unlock();
    }
  }

  /**
   * Copy thread: takes the oldest STAGED slot (STAGED → COPYING), waiting up to {@code timeout}.
   * Returns null on timeout, and once the ring is closed or failed.
   */
  public Slot<P> takeStaged(long timeout, TimeUnit unit) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      long remaining = unit.toNanos(timeout);
      while (!sequencer.hasStaged() && remaining > 0 && !run.terminated()) {
        remaining = await(stagedAvailable, remaining);
      }
      return run.terminated() ? null : sequencer.takeStaged();
    } finally {
      lock.unlock();
    }
  }

  /** Copy thread: like {@link #takeStaged} without waiting. */
  public Slot<P> pollStaged() {
    lock.lock();
    try {
      return run.terminated() ? null : sequencer.takeStaged();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Copy thread: marks a slot READY (COPYING → READY) once the device has finished reading its host
   * bytes. Slots must be made ready in the order they were taken, which keeps lease order equal to
   * publication order.
   */
  public void ready(Slot<P> slot) {
    lock.lock();
    try {
      sequencer.ready(slot);
      readyAvailable.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Leases the oldest READY slot (READY → LEASED), waiting while none is ready. The consumer must
   * pass the lease to {@link #release} before its deadline.
   *
   * @return the lease, or null once {@link #endOfInput} was called and every batch was leased
   * @throws TimeoutException if nothing became ready in time
   * @throws IllegalStateException after {@link #close}
   * @throws RingFailedException after a failure
   */
  public Lease<P> lease(long timeout, TimeUnit unit) throws TimeoutException, InterruptedException {
    lock.lockInterruptibly();
    try {
      long start = System.nanoTime();
      long remaining = unit.toNanos(timeout);
      try {
        while (true) {
          expireLeases(System.nanoTime());
          run.checkNotClosedOrFailed();
          Slot<P> s = sequencer.takeReady();
          if (s != null) {
            return deadlines.lease(s);
          }
          if (run.ended() && sequencer.inFlight() == 0) {
            return null;
          }
          if (remaining <= 0) {
            throw new TimeoutException(
                "No batch ready within "
                    + unit.toMillis(timeout)
                    + " ms ("
                    + sequencer.describe()
                    + ")");
          }
          remaining = await(readyAvailable, remaining);
        }
      } finally {
        stats.consumerWaitNanos += System.nanoTime() - start;
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Ends a lease (LEASED → FREE). Safe to call twice, late, or after close: returns false and does
   * nothing when {@code lease} is no longer the slot's current one.
   */
  public boolean release(Lease<P> lease) {
    lock.lock();
    try {
      if (!lease.isCurrent()) {
        return false;
      }
      sequencer.release(lease.slot());
      freeAvailable.signalAll();
      slotReturned.signalAll();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** No more fills: consumers drain what is in the ring, then {@link #lease} returns null. */
  public void endOfInput() {
    lock.lock();
    try {
      if (run.end()) {
        signalAllLocked();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Fails the ring with {@code cause} (the first cause wins); every waiter wakes and throws. */
  public void fail(Throwable cause) {
    lock.lock();
    try {
      if (run.fail(cause)) {
        signalAllLocked();
      }
    } finally {
      lock.unlock();
    }
  }

  /** The cause the ring failed with, or null. */
  public Throwable failureCause() {
    lock.lock();
    try {
      return run.failure();
    } finally {
      lock.unlock();
    }
  }

  /** True once closed or failed: the copy thread stops. */
  public boolean isTerminated() {
    lock.lock();
    try {
      return run.terminated();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Stops the ring: waiters wake and throw; slots not leased and not being copied are discarded to
   * FREE. Leases stay valid until released or {@link #revokeLeases}. Idempotent.
   */
  @Override
  public void close() {
    lock.lock();
    try {
      if (run.close()) {
        sequencer.discardQueued();
        signalAllLocked();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits up to {@code timeout} until no slot is leased; returns the number still leased. Meant for
   * shutdown, after {@link #close}.
   */
  public int awaitLeasesReleased(long timeout, TimeUnit unit) throws InterruptedException {
    return awaitNone(SlotState.LEASED, timeout, unit);
  }

  /**
   * Waits up to {@code timeout} until no filler is writing a slot (none FILLING); returns the
   * number still filling. Meant for shutdown, after {@link #close}: memory may be freed only once
   * this returns 0.
   */
  public int awaitFillsFinished(long timeout, TimeUnit unit) throws InterruptedException {
    return awaitNone(SlotState.FILLING, timeout, unit);
  }

  private int awaitNone(SlotState state, long timeout, TimeUnit unit) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      long remaining = unit.toNanos(timeout);
      while (sequencer.count(state) > 0 && remaining > 0) {
        remaining = slotReturned.awaitNanos(remaining);
      }
      return sequencer.count(state);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Revokes every outstanding lease (LEASED → FREE) so a late release does nothing; returns how
   * many were revoked. Meant for shutdown, after {@link #close} and before freeing memory.
   */
  public int revokeLeases() {
    lock.lock();
    try {
      return sequencer.revokeLeases();
    } finally {
      lock.unlock();
    }
  }

  /** A copy of the counters now. */
  public RingSnapshot snapshot() {
    lock.lock();
    try {
      return stats.snapshot(System.nanoTime());
    } finally {
      lock.unlock();
    }
  }

  /** Waits on {@code c} (see {@link LeaseDeadlines#await}), then fails the ring on a late lease. */
  private long await(Condition c, long remainingNanos) throws InterruptedException {
    long left = deadlines.await(c, remainingNanos);
    expireLeases(System.nanoTime());
    return left;
  }

  private void expireLeases(long now) {
    if (run.terminated()) {
      return;
    }
    LeaseExpiredException late = deadlines.expired(now);
    if (late != null) {
      stats.expired++;
      fail(late);
    }
  }

  private void signalAllLocked() {
    freeAvailable.signalAll();
    stagedAvailable.signalAll();
    readyAvailable.signalAll();
    slotReturned.signalAll();
  }
}
