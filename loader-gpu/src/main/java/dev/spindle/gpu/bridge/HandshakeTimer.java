package dev.spindle.gpu.bridge;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Drops connections whose HELLO does not arrive in time, so that idle or half-open peers cannot
 * hold connection threads: a connection's thread calls {@link #start} when it begins and {@link
 * Pending#finish} once its HELLO is read (or reading failed); if the timeout comes first, the timer
 * closes the channel, which ends the blocked read.
 *
 * <p>Threads: one named daemon thread ({@code spindle-bridge-handshake}) for every connection of a
 * bridge; {@link #start} and {@link Pending} from connection threads. {@link #close()} is
 * idempotent and cancels every pending deadline.
 */
final class HandshakeTimer implements AutoCloseable {
  private static final int WAITING = 0;
  private static final int GREETED = 1;
  private static final int EXPIRED = 2;
  private final Duration timeout;
  private final ScheduledThreadPoolExecutor timer;

  HandshakeTimer(Duration timeout) {
    this.timeout = timeout;
    this.timer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "spindle-bridge-handshake");
              t.setDaemon(true);
              return t;
            });
    timer.setRemoveOnCancelPolicy(true); // a finished handshake leaves nothing queued
  }

  /** The handshake timeout, as "N s" (or "N ms"), for messages. */
  String describe() {
    long ms = timeout.toMillis();
    return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
  }

  /**
   * Starts {@code ch}'s deadline. After {@link #close()} the handshake has expired at once: its
   * channel is closed and {@link Pending#finish} returns false.
   */
  Pending start(SocketChannel ch) {
    Pending p = new Pending(ch);
    try {
      p.deadline = timer.schedule(p::expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      p.expire(); // the bridge is closing: no new connection is served
    }
    return p;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }

  /** One connection's handshake: greeted in time, or expired (and its channel closed). */
  static final class Pending {
    private final SocketChannel ch;
    private final AtomicInteger state = new AtomicInteger(WAITING);
    private volatile ScheduledFuture<?> deadline;

    private Pending(SocketChannel ch) {
      this.ch = ch;
    }

    /** Ends the deadline; true if the handshake ended before it, false if it expired. */
    boolean finish() {
      boolean inTime = state.compareAndSet(WAITING, GREETED);
      ScheduledFuture<?> d = deadline;
      if (inTime && d != null) {
        d.cancel(false);
      }
      return inTime || state.get() == GREETED;
    }

    /** Whether the timer dropped the connection. */
    boolean expired() {
      return state.get() == EXPIRED;
    }

    private void expire() {
      if (state.compareAndSet(WAITING, EXPIRED)) {
        try {
          ch.close();
        } catch (IOException e) {
          // the connection thread sees the channel closed either way
        }
      }
    }
  }
}
