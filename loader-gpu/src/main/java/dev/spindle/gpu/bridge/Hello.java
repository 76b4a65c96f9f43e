package dev.spindle.gpu.bridge;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * A trainer's HELLO (protocol version 2): the run token, rank, world size, resume point, device,
 * and the epoch and manifest of the loader state it resumes from. Immutable; made by the
 * connection's thread.
 *
 * @param token the run token presented ("" for none)
 * @param rank the rank asked for
 * @param world the world size the trainer runs with
 * @param resume batches of the current leg its state says it consumed; -1 for no state
 * @param device {@code cpu} or {@code cuda:N}, unchecked
 * @param state the epoch and manifest of its state ({@link BridgeServer.Epoch#NONE} without one)
 */
record Hello(String token, int rank, int world, long resume, String device,
    BridgeServer.Epoch state) {

  /** Reads a HELLO payload, which must be consumed exactly. */
  static Hello parse(ByteBuffer p) {
    Hello h;
    int epoch;
    try {
      String token = Wire.getString(p);
      int rank = p.getInt();
      int world = p.getInt();
      long resume = p.getLong();
      String device = Wire.getString(p);
      epoch = p.getInt();
      String manifest = Wire.getString(p);
      h = epoch < -1 ? null : new Hello(token, rank, world, resume, device,
          new BridgeServer.Epoch(epoch, manifest));
    } catch (BufferUnderflowException e) {
      throw new ProtocolException(BridgeError.MALFORMED,
          "Invalid HELLO: payload of " + p.limit() + " bytes is too short");
    }
    if (h == null) {
      throw new ProtocolException(BridgeError.MALFORMED,
          "Invalid HELLO: state epoch " + epoch + " (must be >= 0, or -1 for no state)");
    }
    if (p.hasRemaining()) {
      throw new ProtocolException(BridgeError.MALFORMED, "Invalid HELLO: " + p.remaining()
          + " unexpected trailing byte(s)");
    }
    return h;
  }
}
