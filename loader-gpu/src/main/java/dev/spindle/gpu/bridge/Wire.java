package dev.spindle.gpu.bridge;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Framing of the bridge protocol (spec: {@code loader-gpu/python/PROTOCOL.md}): a 12-byte
 * little-endian header {@code "SPDL", u16 version, u16 type, u32 payload length}, then the payload.
 * Reading validates magic, version and length before reading the payload, so a bad peer is refused
 * without allocating what it claims. Stateless; each channel is read by one thread and written by
 * one thread at a time.
 */
final class Wire {
  static final int VERSION = 6;
  static final int HEADER = 12;
  static final int MAX_PAYLOAD = 1 << 20;
  private static final byte[] MAGIC = {'S', 'P', 'D', 'L'};

  // Message types.
  static final int HELLO = 1;
  static final int WELCOME = 2;
  static final int NEXT = 3;
  static final int BATCH = 4;
  static final int RELEASE = 5;
  static final int END = 6;
  static final int TIMEOUT = 7;
  static final int ERROR = 8;
  static final int BYE = 9;

  private Wire() {}

  /** A received message: its type and payload (little-endian, positioned at 0). */
  record Frame(int type, ByteBuffer payload) {}

  /**
   * Reads one frame; null on a clean end of stream before a header.
   *
   * @throws ProtocolException for a bad magic, version or length (nothing more is read)
   * @throws EOFException when the stream ends inside the frame
   */
  static Frame read(ReadableByteChannel ch) throws IOException {
    ByteBuffer h = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
    if (!fill(ch, h, true)) {
      return null;
    }
    h.flip();
    for (byte b : MAGIC) {
      if (h.get() != b) {
        throw new ProtocolException(
            BridgeError.MALFORMED, "Not a Spindle bridge peer: bad magic (expected \"SPDL\")");
      }
    }
    int version = Short.toUnsignedInt(h.getShort());
    int type = Short.toUnsignedInt(h.getShort());
    long length = Integer.toUnsignedLong(h.getInt());
    if (version != VERSION) {
      throw new ProtocolException(
          BridgeError.BAD_VERSION,
          "Unsupported protocol version "
              + version
              + ": this feeder speaks version "
              + VERSION
              + "; use the spindle_bridge "
              + "client of this Spindle release (loader-gpu/python), which speaks version "
              + VERSION);
    }
    if (length > MAX_PAYLOAD) {
      throw new ProtocolException(
          BridgeError.TOO_LARGE,
          "Invalid message: payload of " + length + " bytes (must be <= " + MAX_PAYLOAD + ")");
    }
    ByteBuffer p = ByteBuffer.allocate((int) length).order(ByteOrder.LITTLE_ENDIAN);
    fill(ch, p, false);
    p.flip();
    return new Frame(type, p);
  }

  /**
   * Writes one frame with {@code payload} (flipped: position 0, limit = length).
   *
   * @throws IllegalStateException for a payload over {@link #MAX_PAYLOAD}: the server never sends a
   *     frame the protocol forbids (nothing is written)
   */
  static void write(SocketChannel ch, int type, ByteBuffer payload) throws IOException {
    ByteBuffer[] frame = {header(type, payload), payload};
    while (frame[0].hasRemaining() || payload.hasRemaining()) {
      ch.write(frame);
    }
  }

  /**
   * Writes one small frame with a single write on a non-blocking channel, never waiting: for
   * refusals made by the accept thread. True if all of it was written.
   */
  static boolean writeNow(SocketChannel ch, int type, ByteBuffer payload) throws IOException {
    ByteBuffer h = header(type, payload);
    ch.write(new ByteBuffer[] {h, payload});
    return !h.hasRemaining() && !payload.hasRemaining();
  }

  /** The header of a frame carrying {@code payload}, ready to write; refuses an oversize one. */
  private static ByteBuffer header(int type, ByteBuffer payload) {
    if (payload.remaining() > MAX_PAYLOAD) {
      throw new IllegalStateException(
          "Invalid "
              + name(type)
              + " message: payload of "
              + payload.remaining()
              + " bytes (the protocol allows at most "
              + MAX_PAYLOAD
              + ")");
    }
    ByteBuffer h = buffer(HEADER);
    h.put(MAGIC).putShort((short) VERSION).putShort((short) type).putInt(payload.remaining());
    return h.flip();
  }

  /** An ERROR payload: u16 code, str message. */
  static ByteBuffer errorPayload(BridgeError e, String message) {
    ByteBuffer b = buffer(2 + stringBytes(message));
    b.putShort((short) e.code);
    putString(b, message);
    return b.flip();
  }

  /** The name of message type {@code type}, for messages. */
  static String name(int type) {
    String[] names = {
      "HELLO", "WELCOME", "NEXT", "BATCH", "RELEASE", "END", "TIMEOUT", "ERROR", "BYE"
    };
    return type >= HELLO && type <= BYE ? names[type - 1] : "type " + type;
  }

  static ByteBuffer buffer(int capacity) {
    return ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Appends a string: u32 byte length, UTF-8 bytes. */
  static void putString(ByteBuffer b, String s) {
    putString(b, s.getBytes(StandardCharsets.UTF_8));
  }

  /** Appends a string already encoded as UTF-8. */
  static void putString(ByteBuffer b, byte[] utf8) {
    b.putInt(utf8.length).put(utf8);
  }

  static int stringBytes(String s) {
    return 4 + s.getBytes(StandardCharsets.UTF_8).length;
  }

  /** Reads a string written by {@link #putString}, refusing lengths past the payload. */
  static String getString(ByteBuffer b) {
    int n = b.getInt();
    if (n < 0 || n > b.remaining()) {
      throw new ProtocolException(
          BridgeError.MALFORMED,
          "Invalid message: string of "
              + Integer.toUnsignedLong(n)
              + " bytes with "
              + b.remaining()
              + " left in the payload");
    }
    byte[] bytes = new byte[n];
    b.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  private static boolean fill(ReadableByteChannel ch, ByteBuffer b, boolean eofAllowedAtStart)
      throws IOException {
    while (b.hasRemaining()) {
      if (ch.read(b) < 0) {
        if (eofAllowedAtStart && b.position() == 0) {
          return false;
        }
        throw new EOFException(
            "Peer closed the connection mid-message ("
                + b.position()
                + " of "
                + b.limit()
                + " bytes)");
      }
    }
    return true;
  }
}
