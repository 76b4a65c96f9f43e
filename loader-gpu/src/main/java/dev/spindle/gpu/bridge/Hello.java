package dev.spindle.gpu.bridge;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * A trainer's HELLO (as of protocol version 5, unchanged in 6): the run token, rank, world size,
 * resume point, device, the plan identity of the loader state it resumes from, and the trainer's
 * process id. Immutable; made by the connection's thread.
 *
 * @param token the run token presented ("" for none)
 * @param rank the rank asked for
 * @param world the world size the trainer runs with
 * @param resume batches of the current leg its state says it consumed; -1 for no state
 * @param device {@code cpu} or {@code cuda:N}, unchecked
 * @param plan the {@link PlanIdentity} of its state ("" without one), unchecked
 * @param pid the trainer's process id as it states it (for messages only: nothing is done to the
 *     process); 0 or less when not stated
 */
record Hello(String token, int rank, int world, long resume, String device, String plan, int pid) {

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
              Wire.getString(p),
              p.getInt());
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

  /** {@code pid 1234}, or {@code pid unknown} when the trainer stated none. */
  String describePid() {
    return pid > 0 ? "pid " + pid : "pid unknown";
  }
}
