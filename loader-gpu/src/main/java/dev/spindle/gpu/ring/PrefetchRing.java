package dev.spindle.gpu.ring;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntFunction;

/**
 * A fixed set of slots cycling FREE → FILLING → STAGED → COPYING → READY → LEASED → FREE (see
 * {@link SlotState}). Fillers claim FREE slots and block when none is left (backpressure: memory
 * is bounded by the slot count); one copy thread moves STAGED slots to the device; consumers lease
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
 * gives the payload's memory effects happens-before from each owner to the next. Slots are
 * created once; the steady path allocates only the {@link Lease} record.
 *
 * <p>Lifecycle: OPEN → ENDED ({@link #endOfInput}: no more fills, consumers drain, then {@link
 * #lease} returns null) → CLOSED ({@link #close}); or FAILED ({@link #fail}, or a lease past its
 * deadline), after which every wait throws {@link RingFailedException} with the first cause.
 */
public final class PrefetchRing<P> implements AutoCloseable {
  private enum Run { OPEN, ENDED, CLOSED, FAILED }

  private final List<Slot<P>> slots;
  private final ArrayDeque<Slot<P>> free;
  private final ArrayDeque<Slot<P>> staged;
  private final ArrayDeque<Slot<P>> ready;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition freeAvailable = lock.newCondition();
  private final Condition stagedAvailable = lock.newCondition();
  private final Condition readyAvailable = lock.newCondition();
  private final Condition slotReturned = lock.newCondition();
  private final long leaseTimeoutNanos;
  private final RingStats stats;
  private Run run = Run.OPEN;
  private Throwable failure;
  private long nextSequence;
  private long nextLeaseId;

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
    this.free = new ArrayDeque<>(all);
    this.staged = new ArrayDeque<>(slotCount);
    this.ready = new ArrayDeque<>(slotCount);
    this.leaseTimeoutNanos = unit.toNanos(leaseTimeout);
    this.stats = new RingStats(slotCount, System.nanoTime());
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
  public Slot<P> claim(long timeout, TimeUnit unit)
      throws TimeoutException, InterruptedException {
    lock.lockInterruptibly();
    long start = System.nanoTime();
    try {
      long remaining = unit.toNanos(timeout);
      while (true) {
        checkAcceptingFills();
        Slot<P> s = free.poll();
        if (s != null) {
          move(s, SlotState.FREE, SlotState.FILLING);
          return s;
        }
        if (remaining <= 0) {
          throw new TimeoutException("No free ring slot within " + unit.toMillis(timeout)
              + " ms: all " + slots.size() + " slots are in use (consumers too slow?)");
        }
        remaining = awaitWithLeaseCheck(freeAvailable, remaining);
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
      move(slot, SlotState.FILLING, SlotState.STAGED);
      slot.sequence(nextSequence++);
      staged.add(slot);
      stats.published++;
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
      move(slot, SlotState.FILLING, SlotState.FREE);
      stats.abandoned++;
      free.add(slot);
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
      while (staged.isEmpty() && remaining > 0 && !isTerminatedLocked()) {
        remaining = awaitWithLeaseCheck(stagedAvailable, remaining);
      }
      return isTerminatedLocked() ? null : takeStagedLocked();
    } finally {
      lock.unlock();
    }
  }

  /** Copy thread: like {@link #takeStaged} without waiting. */
  public Slot<P> pollStaged() {
    lock.lock();
    try {
      return isTerminatedLocked() ? null : takeStagedLocked();
    } finally {
      lock.unlock();
    }
  }

  private Slot<P> takeStagedLocked() {
    Slot<P> s = staged.poll();
    if (s != null) {
      move(s, SlotState.STAGED, SlotState.COPYING);
    }
    return s;
  }

  /**
   * Copy thread: marks a slot READY (COPYING → READY) once the device has finished reading its
   * host bytes. Slots must be made ready in the order they were taken, which keeps lease order
   * equal to publication order.
   */
  public void ready(Slot<P> slot) {
    lock.lock();
    try {
      move(slot, SlotState.COPYING, SlotState.READY);
      ready.add(slot);
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
  public Lease<P> lease(long timeout, TimeUnit unit)
      throws TimeoutException, InterruptedException {
    lock.lockInterruptibly();
    try {
      long start = System.nanoTime();
      long remaining = unit.toNanos(timeout);
      try {
        while (true) {
          checkNotClosedOrFailed();
          Slot<P> s = ready.poll();
          if (s != null) {
            return leaseLocked(s);
          }
          if (run == Run.ENDED && inFlightLocked() == 0) {
            return null;
          }
          if (remaining <= 0) {
            throw new TimeoutException("No batch ready within " + unit.toMillis(timeout)
                + " ms (" + describeLocked() + ")");
          }
          remaining = awaitWithLeaseCheck(readyAvailable, remaining);
        }
      } finally {
        stats.consumerWaitNanos += System.nanoTime() - start;
      }
    } finally {
      lock.unlock();
    }
  }

  private Lease<P> leaseLocked(Slot<P> s) {
    move(s, SlotState.READY, SlotState.LEASED);
    long id = nextLeaseId++;
    long deadline = System.nanoTime() + leaseTimeoutNanos;
    s.lease(id, deadline, Thread.currentThread().getName());
    stats.leased++;
    return new Lease<>(s, id, s.sequence(), deadline);
  }

  /**
   * Ends a lease (LEASED → FREE). Safe to call twice, late, or after close: returns false and does
   * nothing when {@code lease} is no longer the slot's current one.
   */
  public boolean release(Lease<P> lease) {
    lock.lock();
    try {
      Slot<P> s = lease.slot();
      if (!lease.isCurrent()) {
        return false;
      }
      s.clearLease();
      move(s, SlotState.LEASED, SlotState.FREE);
      stats.released++;
      free.add(s);
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
      if (run == Run.OPEN) {
        run = Run.ENDED;
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
      if (run == Run.OPEN || run == Run.ENDED) {
        run = Run.FAILED;
        failure = cause;
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
      return failure;
    } finally {
      lock.unlock();
    }
  }

  /** True once closed or failed: the copy thread stops. */
  public boolean isTerminated() {
    lock.lock();
    try {
      return isTerminatedLocked();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Stops the ring: waiters wake and throw; slots not leased and not being copied are discarded
   * to FREE. Leases stay valid until released or {@link #revokeLeases}. Idempotent.
   */
  @Override
  public void close() {
    lock.lock();
    try {
      if (run != Run.CLOSED) {
        if (run != Run.FAILED) {
          run = Run.CLOSED;
        }
        discard(staged, SlotState.STAGED);
        discard(ready, SlotState.READY);
        signalAllLocked();
      }
    } finally {
      lock.unlock();
    }
  }

  private void discard(ArrayDeque<Slot<P>> queue, SlotState from) {
    for (Slot<P> s = queue.poll(); s != null; s = queue.poll()) {
      move(s, from, SlotState.FREE);
      stats.discarded++;
      free.add(s);
    }
  }

  /**
   * Waits up to {@code timeout} until no slot is leased; returns the number still leased.
   * Meant for shutdown, after {@link #close}.
   */
  public int awaitLeasesReleased(long timeout, TimeUnit unit) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      long remaining = unit.toNanos(timeout);
      while (stats.count(SlotState.LEASED) > 0 && remaining > 0) {
        remaining = slotReturned.awaitNanos(remaining);
      }
      return stats.count(SlotState.LEASED);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits up to {@code timeout} until no filler is writing a slot (none FILLING); returns the
   * number still filling. Meant for shutdown, after {@link #close}: memory may be freed only once
   * this returns 0.
   */
  public int awaitFillsFinished(long timeout, TimeUnit unit) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      long remaining = unit.toNanos(timeout);
      while (stats.count(SlotState.FILLING) > 0 && remaining > 0) {
        remaining = slotReturned.awaitNanos(remaining);
      }
      return stats.count(SlotState.FILLING);
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
      int n = 0;
      for (Slot<P> s : slots) {
        if (s.state() == SlotState.LEASED) {
          s.clearLease();
          move(s, SlotState.LEASED, SlotState.FREE);
          free.add(s);
          n++;
        }
      }
      return n;
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

  private void move(Slot<P> s, SlotState from, SlotState to) {
    s.moveTo(from, to);
    stats.transition(from, to, System.nanoTime());
  }

  private long awaitWithLeaseCheck(Condition c, long remainingNanos) throws InterruptedException {
    long now = System.nanoTime();
    long wait = Math.min(remainingNanos, untilEarliestDeadline(now));
    long left = c.awaitNanos(Math.max(wait, 1));
    expireLeases(System.nanoTime());
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

  private void expireLeases(long now) {
    if (run == Run.CLOSED || run == Run.FAILED) {
      return;
    }
    for (Slot<P> s : slots) {
      if (s.state() == SlotState.LEASED && now - s.leaseDeadlineNanos() > 0) {
        stats.expired++;
        fail(new LeaseExpiredException("Lease on batch #" + s.sequence() + " (slot " + s.index()
            + ") held by thread '" + s.holder() + "' was not released within "
            + TimeUnit.NANOSECONDS.toMillis(leaseTimeoutNanos) + " ms; close the DeviceBatch"
            + " (try-with-resources) or raise the lease timeout"));
        return;
      }
    }
  }

  private void checkAcceptingFills() {
    checkNotClosedOrFailed();
    if (run == Run.ENDED) {
      throw new IllegalStateException("Prefetch ring is ended: no more batches are accepted");
    }
  }

  private void checkNotClosedOrFailed() {
    expireLeases(System.nanoTime());
    if (run == Run.FAILED) {
      throw new RingFailedException(failure);
    }
    if (run == Run.CLOSED) {
      throw new IllegalStateException("Prefetch ring is closed");
    }
  }

  private boolean isTerminatedLocked() {
    return run == Run.CLOSED || run == Run.FAILED;
  }

  private int inFlightLocked() {
    return stats.count(SlotState.FILLING) + stats.count(SlotState.STAGED)
        + stats.count(SlotState.COPYING) + stats.count(SlotState.READY);
  }

  private String describeLocked() {
    StringBuilder b = new StringBuilder();
    for (SlotState st : SlotState.values()) {
      b.append(b.length() == 0 ? "" : ", ").append(st).append('=').append(stats.count(st));
    }
    return b.toString();
  }

  private void signalAllLocked() {
    freeAvailable.signalAll();
    stagedAvailable.signalAll();
    readyAvailable.signalAll();
    slotReturned.signalAll();
  }
}
