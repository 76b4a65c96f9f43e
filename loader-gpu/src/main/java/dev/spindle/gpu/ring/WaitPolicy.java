package dev.spindle.gpu.ring;

import java.util.concurrent.locks.LockSupport;

/**
 * How the copy thread idles while the device is still working on a copy it must poll for (its
 * event), as Disruptor's {@code WaitStrategy}. Correctness never depends on the policy: a slot
 * becomes READY only when its event reports completion; the policy trades CPU for latency.
 *
 * <p>Implementations are stateless and shared; {@link #idle} is called by one thread at a time.
 */
public interface WaitPolicy {

  /** Idles once; {@code attempt} counts the consecutive idle calls, from 0. */
  void idle(int attempt);

  /** Spins forever: lowest latency, one core busy. */
  WaitPolicy BUSY_SPIN = attempt -> Thread.onSpinWait();

  /** Spins briefly, then yields the core. */
  WaitPolicy YIELDING =
      attempt -> {
        if (attempt < 100) {
          Thread.onSpinWait();
        } else {
          Thread.yield();
        }
      };

  /** Spins, yields, then parks 20 µs at a time: the default, kind to shared machines. */
  WaitPolicy PARKING =
      attempt -> {
        if (attempt < 50) {
          Thread.onSpinWait();
        } else if (attempt < 100) {
          Thread.yield();
        } else {
          LockSupport.parkNanos(20_000L);
        }
      };

  /**
   * Parses {@code busy-spin}, {@code yielding} or {@code parking}.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  static WaitPolicy parse(String name) {
    return switch (name.toLowerCase(java.util.Locale.ROOT)) {
      case "busy-spin" -> BUSY_SPIN;
      case "yielding" -> YIELDING;
      case "parking" -> PARKING;
      default ->
          throw new IllegalArgumentException(
              "Invalid wait policy: '" + name + "' (must be busy-spin, yielding or parking)");
    };
  }
}
