package dev.spindle.gpu.bridge;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * A trainer's HELLO (protocol versions 2, 3): the run token, rank, world size, resume point,
 * device, and the plan identity of the loader state it resumes from. Immutable; made by the
 * connection's thread.
 *
 * @param token the run token presented ("" for none)
 * @param rank the rank asked for
 * @param world the world size the trainer runs with
 * @param resume batches of the current leg its state says it consumed; -1 for no state
 * @param device {@code cpu} or {@code cuda:N}, unchecked
 * @param plan the {@link PlanIdentity} of its state ("" without one), unchecked
 */
record Hello(String token, int rank, int world, long resume, String device, String plan) {

  /** Reads a HELLO payload, which must be consumed exactly. */
  static Hello parse(ByteBuffer p) {
    Hello h;
    try {
      h =
          new Hello(
              Wire.getString(p),
              p.getInt(),
              p.getInt(),
              p.getLong(),
              Wire.getString(p),
              Wire.getString(p));
    } catch (BufferUnderflowException e) {
      throw new ProtocolException(
          BridgeError.MALFORMED, "Invalid HELLO: payload of " + p.limit() + " bytes is too short");
    }
    if (p.hasRemaining()) {
      throw new ProtocolException(
          BridgeError.MALFORMED,
          "Invalid HELLO: " + p.remaining() + " unexpected trailing byte(s)");
    }
    return h;
  }
}
