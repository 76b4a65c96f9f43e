package dev.spindle.gpu.bridge;

import java.time.Duration;
import java.util.Objects;

/**
 * Who may connect, and how many at once: trainers that present {@code token}; a peer that has not
 * sent a whole HELLO within {@code handshakeTimeout} is dropped; past {@code maxConnections} open
 * connections a new one gets an ERROR (BUSY) and is closed at once, by the accept thread, without a
 * thread of its own. Immutable; any thread.
 *
 * @param token the run's token (see {@link RunToken})
 * @param handshakeTimeout how long a new connection may take to send its HELLO
 * @param maxConnections connections open at once (trainers and peers in their handshake)
 */
public record Admission(RunToken token, Duration handshakeTimeout, int maxConnections) {
  /** Default handshake timeout: a trainer sends HELLO right after it connects. */
  public static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  /** Default connection cap: far above the ranks one node serves. */
  public static final int MAX_CONNECTIONS = 64;

  /** Validates. */
  public Admission {
    Objects.requireNonNull(token, "token");
    if (handshakeTimeout == null || handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
      throw new IllegalArgumentException(
          "Invalid handshake timeout: " + handshakeTimeout + " (must be > 0)");
    }
    if (maxConnections < 1) {
      throw new IllegalArgumentException(
          "Invalid connection cap: " + maxConnections + " (must be >= 1)");
    }
  }

  /** Admission for {@code token}'s trainers with the default limits. */
  public static Admission of(RunToken token) {
    return new Admission(token, HANDSHAKE_TIMEOUT, MAX_CONNECTIONS);
  }

  /** The same token with other limits. */
  public Admission withLimits(Duration handshake, int connections) {
    return new Admission(token, handshake, connections);
  }
}
