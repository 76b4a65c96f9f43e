package dev.spindle.gpu.ring;

/**
 * The run state of one {@link PrefetchRing}, apart from its slots' states: OPEN → ENDED (end of
 * input: no more fills, consumers drain) → CLOSED; or FAILED from OPEN or ENDED, keeping the first
 * cause, which every later wait rethrows. A closed ring never fails; a failed one stays FAILED when
 * closed.
 *
 * <p>Threads: not thread-safe on its own; read and changed only under the ring's lock, so that a
 * change of state and the wake-up of the ring's waiters are one step. Owns only the failure cause
 * (the caller's throwable, kept to be rethrown).
 */
final class RingRun {
  private enum State {
    OPEN,
    ENDED,
    CLOSED,
    FAILED
  }

  private State state = State.OPEN;
  private Throwable failure;

  /** OPEN → ENDED; false (and no change) in any other state. */
  boolean end() {
    if (state != State.OPEN) {
      return false;
    }
    state = State.ENDED;
    return true;
  }

  /** OPEN or ENDED → FAILED with {@code cause}; false once closed or failed (first cause wins). */
  boolean fail(Throwable cause) {
    if (state != State.OPEN && state != State.ENDED) {
      return false;
    }
    state = State.FAILED;
    failure = cause;
    return true;
  }

  /**
   * → CLOSED, or stays FAILED; false only when already CLOSED (a failed ring answers true each
   * time, so closing it again still clears its queues).
   */
  boolean close() {
    if (state == State.CLOSED) {
      return false;
    }
    if (state != State.FAILED) {
      state = State.CLOSED;
    }
    return true;
  }

  /** True after {@link #end} and before a close or failure. */
  boolean ended() {
    return state == State.ENDED;
  }

  /** True once closed or failed: nothing more is handed out. */
  boolean terminated() {
    return state == State.CLOSED || state == State.FAILED;
  }

  /** The cause the ring failed with, or null. */
  Throwable failure() {
    return failure;
  }

  /**
   * Throws what a wait throws on a ring that no longer hands out batches.
   *
   * @throws RingFailedException with the first cause, after a failure
   * @throws IllegalStateException after a close
   */
  void checkNotClosedOrFailed() {
    if (state == State.FAILED) {
      throw new RingFailedException(failure);
    }
    if (state == State.CLOSED) {
      throw new IllegalStateException("Prefetch ring is closed");
    }
  }

  /** {@link #checkNotClosedOrFailed}, and refuses a fill after the end of input. */
  void checkAcceptingFills() {
    checkNotClosedOrFailed();
    if (state == State.ENDED) {
      throw new IllegalStateException("Prefetch ring is ended: no more batches are accepted");
    }
  }
}
