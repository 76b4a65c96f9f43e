package dev.spindle.gpu.bridge;

import dev.spindle.gpu.device.ElementType;
import dev.spindle.gpu.feed.DeviceBatch;
import dev.spindle.gpu.feed.FeederConfig;
import dev.spindle.gpu.ring.LeaseExpiredException;
import dev.spindle.gpu.ring.RingFailedException;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One trainer connection: handshake, then NEXT / RELEASE until BYE or disconnect. On any exit the
 * batches the trainer still holds are revoked from it and handed to its rank's next trainer.
 *
 * <p>Threads: runs on its own connection thread, the only reader and writer of its channel; the
 * server may close the channel from another thread to stop it.
 */
final class TrainerSession implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(TrainerSession.class);
  private static final Duration STEP = Duration.ofMillis(500);

  /**
   * How long a HELLO waits for its rank's previous trainer to give the rank back (its connection
   * thread reading the BYE the trainer sent before it reconnected) before RANK_TAKEN.
   */
  private static final Duration TAKEOVER = Duration.ofSeconds(2);

  private final BridgeServer server;
  private final SocketChannel ch;
  private final int id;

  /** Batches leased to the trainer, by number; written by the session thread, under this. */
  private final Map<Long, DeviceBatch> held = new LinkedHashMap<>();

  private RankChannel rank;

  /** The trainer's process id, as its HELLO stated it (0 before, or when it stated none). */
  private volatile int pid;

  /** The handshake's deadline; null until the session has started. */
  private HandshakeTimer.Pending pending;

  TrainerSession(BridgeServer server, SocketChannel ch, int id) {
    this.server = server;
    this.ch = ch;
    this.id = id;
  }

  @Override
  public void run() {
    try {
      pending = server.handshakeStarted(ch);
      Wire.Frame hello = readHello();
      if (hello == null) {
        return;
      }
      handshake(hello);
      serve();
    } catch (IOException e) {
      if (pending != null && pending.expired()) {
        server.refused.incrementAndGet();
        LOG.debug("Bridge connection {} dropped: no HELLO within {}", id, server.handshake());
      } else {
        LOG.info("Bridge connection {} ({}) lost: {}", id, this, e.toString());
      }
    } catch (ProtocolException e) {
      server.refused.incrementAndGet();
      LOG.warn("Bridge connection {}: refused: {}", id, e.getMessage());
      sendError(e.error, e.getMessage());
    } catch (RingFailedException e) {
      sendError(BridgeError.FEEDER_FAILED, feederFailed(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.error("Bridge connection {} ({}) failed", id, this, e);
      sendError(BridgeError.UNEXPECTED, "Internal error: " + e);
    } finally {
      depart();
    }
  }

  /** The first frame, read under the handshake deadline; null if the peer left first. */
  private Wire.Frame readHello() throws IOException {
    Wire.Frame f;
    try {
      f = Wire.read(ch);
    } finally {
      if (!pending.finish()) {
        throw new IOException("no HELLO within " + server.handshake());
      }
    }
    return f;
  }

  /**
   * Refuses {@code ch} on the calling (accept) thread without waiting: one non-blocking write of
   * the ERROR, then close.
   */
  static void refuseAtOnce(SocketChannel ch, BridgeError e, String message) {
    try (ch) {
      ch.configureBlocking(false);
      Wire.writeNow(ch, Wire.ERROR, Wire.errorPayload(e, message));
      discardInput(ch);
    } catch (IOException ex) {
      LOG.debug("Could not send {} to a refused bridge connection", e, ex);
    }
  }

  private void handshake(Wire.Frame f) throws IOException, InterruptedException {
    expect(f, Wire.HELLO);
    Hello h = Hello.parse(f.payload());
    server.checkToken(h.token());
    pid = h.pid();
    ServedMemory.checkDevice(h.device());
    RankChannel c = server.rankFor(h);
    String other = c.claim(this, TAKEOVER);
    if (other != null) {
      throw new ProtocolException(
          BridgeError.RANK_TAKEN,
          "Rank " + h.rank() + " already has a trainer connected (" + other + ")");
    }
    rank = c;
    long at = c.position();
    long resume = h.resume();
    if (resume >= 0 && resume < at) {
      rank = null;
      c.depart(this, List.of());
      throw new ProtocolException(
          BridgeError.BAD_RESUME,
          "Rank "
              + h.rank()
              + " is at batch "
              + at
              + " but the trainer's state says "
              + resume
              + " batches consumed: batches "
              + resume
              + ".."
              + (at - 1)
              + " already left this feeder; restart the feed job from "
              + "that loader state");
    }
    while (resume > at && c.skipStep(resume, STEP)) {
      server.checkOpen(); // a skip of a feed of unknown length stops when the bridge closes
    }
    sendWelcome(c);
    server.connected.incrementAndGet();
    LOG.info(
        "Bridge connection {}: trainer for rank {}/{} ({}, {}) starts at batch {}",
        id,
        h.rank(),
        h.world(),
        h.device(),
        h.describePid(),
        c.position());
  }

  private void sendWelcome(RankChannel c) throws IOException {
    FeederConfig cfg = c.feeder.config();
    var spec = cfg.normalize();
    ByteBuffer b = Wire.buffer(72 + c.memory.blockBytes() + Wire.stringBytes(c.loaderState));
    b.putInt(c.rank).putInt(server.worldSize).putLong(c.position());
    b.put(c.memory.kind());
    c.memory.putBlock(b);
    // a feeder without images says so with a 0x0x0 uint8 shape (PROTOCOL.md, WELCOME)
    boolean images = cfg.images();
    b.put((byte) (images ? spec.type() : ElementType.UINT8).ordinal())
        .putInt(images ? spec.height() : 0)
        .putInt(images ? spec.width() : 0)
        .putInt(images ? spec.channels() : 0)
        .putInt(cfg.maxRows());
    Wire.putString(b, c.loaderState);
    b.putLong(c.endBatch() == RankFeed.UNKNOWN_END ? -1 : c.endBatch());
    Wire.write(ch, Wire.WELCOME, b.flip());
  }

  private void serve() throws IOException, InterruptedException {
    while (true) {
      Wire.Frame f = Wire.read(ch);
      if (f == null) {
        throw new IOException("trainer closed the connection without BYE");
      }
      switch (f.type()) {
        case Wire.NEXT -> next(f.payload());
        case Wire.RELEASE -> release(f.payload());
        case Wire.BYE -> {
          checkEnd("BYE", f.payload());
          synchronized (this) {
            held.values().forEach(DeviceBatch::close);
            held.clear();
          }
          return;
        }
        default ->
            throw new ProtocolException(
                BridgeError.MALFORMED, "Invalid message type " + f.type() + " after the handshake");
      }
    }
  }

  private void next(ByteBuffer p) throws IOException, InterruptedException {
    long timeoutMs = onlyLong("NEXT", p);
    // capped (about 146 years) so the deadline wraps at most once: compare by difference only
    long waitNanos = Math.min(Math.max(0, timeoutMs), Long.MAX_VALUE / 2_000_000L) * 1_000_000L;
    long deadline = System.nanoTime() + waitNanos;
    while (true) {
      server.checkOpen();
      long left = deadline - System.nanoTime();
      try {
        DeviceBatch b =
            rank.next(left < STEP.toNanos() ? Duration.ofNanos(Math.max(left, 1)) : STEP);
        if (b == null) {
          Wire.write(ch, Wire.END, Wire.buffer(0));
        } else {
          synchronized (this) {
            held.put(rank.number(b), b);
          }
          sendBatch(b);
        }
        return;
      } catch (TimeoutException e) {
        if (System.nanoTime() - deadline >= 0) {
          Wire.write(ch, Wire.TIMEOUT, Wire.buffer(0));
          return;
        }
      }
    }
  }

  private void sendBatch(DeviceBatch b) throws IOException {
    ServedMemory memory = rank.memory;
    int rows = b.rows();
    long[] shape = b.shape();
    int table = BatchFields.bytes(b.fields());
    int keyLimit = BatchKeys.limit(rows, table - 2);
    int keyBytes = 0;
    byte[][] keys = new byte[rows][];
    for (int i = 0; i < rows; i++) {
      keys[i] = BatchKeys.cut(b.key(i), keyLimit);
      keyBytes += 4 + keys[i].length;
    }
    ByteBuffer o = Wire.buffer(64 + table + 8 * shape.length + 12 * rows + keyBytes);
    o.putLong(rank.number(b)).putInt(rows).put((byte) b.dtype().ordinal()).put((byte) shape.length);
    for (long d : shape) {
      o.putLong(d);
    }
    // Event kind 0: a leased slot is READY, so its copy event has completed (see PROTOCOL.md).
    o.putLong(memory.offsetOf(b.imagePointer(), b.imageBytes()))
        .putLong(b.imageBytes())
        .putLong(memory.offsetOf(b.labelsPointer(), 8L * rows))
        .put((byte) 0);
    BatchFields.put(o, b, memory);
    for (int i = 0; i < rows; i++) {
      o.putLong(b.index(i));
    }
    for (int i = 0; i < rows; i++) {
      o.putFloat(b.weight(i));
    }
    for (byte[] k : keys) {
      Wire.putString(o, k);
    }
    Wire.write(ch, Wire.BATCH, o.flip());
    server.delivered.incrementAndGet();
  }

  private void release(ByteBuffer p) {
    long n = onlyLong("RELEASE", p);
    DeviceBatch b;
    synchronized (this) {
      b = held.remove(n);
    }
    if (b == null) {
      throw new ProtocolException(
          BridgeError.UNEXPECTED,
          "Invalid RELEASE: batch " + n + " is not held by this trainer (held: " + held() + ")");
    }
    b.close();
  }

  private void depart() {
    leaveRank();
    try {
      ch.close();
    } catch (IOException e) {
      LOG.debug("Closing bridge connection {}", id, e);
    }
    server.sessionEnded();
  }

  /**
   * Gives the rank back (its held batches revoked, kept for its next trainer); idempotent. Done
   * before an ERROR reaches the peer, so that a trainer that reconnects at once finds the rank
   * free.
   */
  private void leaveRank() {
    RankChannel left = rank;
    if (left != null) {
      rank = null;
      List<DeviceBatch> revoked;
      synchronized (this) {
        revoked = List.copyOf(held.values());
        held.clear();
      }
      int n = revoked.size();
      left.depart(this, revoked);
      if (n > 0) {
        server.revoked.addAndGet(n);
        LOG.warn(
            "Trainer for rank {} left holding {} batch(es); revoked, kept for the rank's "
                + "next trainer",
            left.rank,
            n);
      }
    }
  }

  private void sendError(BridgeError e, String message) {
    leaveRank();
    try {
      Wire.write(ch, Wire.ERROR, Wire.errorPayload(e, message));
      discardInput(ch);
    } catch (IOException | RuntimeException ex) {
      LOG.debug("Could not send ERROR to bridge connection {}", id, ex);
    }
  }

  /**
   * Ends output and drops what the refused peer already sent, without waiting (at most 64 reads):
   * closing a Unix socket with unread input resets the connection, and the peer would lose the
   * ERROR that explains the refusal.
   */
  private static void discardInput(SocketChannel ch) throws IOException {
    ch.shutdownOutput();
    ch.configureBlocking(false);
    ByteBuffer sink = ByteBuffer.allocate(1 << 16);
    for (int i = 0; i < 64 && ch.read(sink.clear()) > 0; i++) {
      // discard
    }
  }

  private static void expect(Wire.Frame f, int type) {
    if (f.type() != type) {
      throw new ProtocolException(
          BridgeError.MALFORMED,
          "Invalid first message: type " + f.type() + " (must be HELLO = " + type + ")");
    }
  }

  /** The payload of a NEXT or RELEASE: exactly one i64. */
  static long onlyLong(String what, ByteBuffer p) {
    long value;
    try {
      value = p.getLong();
    } catch (BufferUnderflowException e) {
      throw new ProtocolException(
          BridgeError.MALFORMED,
          "Invalid " + what + ": payload of " + p.limit() + " bytes is too short");
    }
    checkEnd(what, p);
    return value;
  }

  static void checkEnd(String what, ByteBuffer p) {
    if (p.hasRemaining()) {
      throw new ProtocolException(
          BridgeError.MALFORMED,
          "Invalid " + what + ": " + p.remaining() + " unexpected trailing byte(s)");
    }
  }

  /** The numbers of the batches the trainer holds now, in order; any thread. */
  synchronized List<Long> held() {
    return held.keySet().stream().sorted().toList();
  }

  /** {@code pid 1234, connection 3}: how messages name this trainer. */
  String trainer() {
    return (pid > 0 ? "pid " + pid : "pid unknown") + ", connection " + id;
  }

  /**
   * What a trainer whose feeder failed is told: when the failure is a lease this trainer held past
   * the lease timeout, that it held it (a trainer releases a batch by asking for the next one).
   */
  private String feederFailed(RingFailedException e) {
    List<Long> mine = held();
    if (e.getCause() instanceof LeaseExpiredException && !mine.isEmpty()) {
      return "Feeder for rank "
          + rank.rank
          + " failed: this trainer ("
          + trainer()
          + ") held batch(es) "
          + mine
          + " longer than the feeder's lease timeout without releasing them (a trainer releases"
          + " a batch when it asks for the next one, or closes its loader)";
    }
    return "Feeder for rank " + rank.rank + " failed: " + e.getMessage();
  }

  @Override
  public String toString() {
    return "connection "
        + id
        + (pid > 0 ? ", pid " + pid : "")
        + (rank == null ? "" : ", rank " + rank.rank);
  }
}
