package dev.spindle.gpu.bridge;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The accept thread of one {@link BridgeServer}: takes connections off the server's listening
 * socket, refuses a connection past {@link Admission#maxConnections} at once with BUSY (on this
 * thread, so it costs no thread of its own), and runs every other one as a {@link TrainerSession}
 * on a connection thread of its own. An accept error (too many open files, ...) is logged and
 * retried after a back-off of 10 ms doubling to 1 s: the bridge keeps serving the trainers it has
 * and takes new ones once the cause is gone.
 *
 * <p>Threads: {@link #start} and {@link #closeAndJoin} from the server (its constructor and its
 * close), {@link #sessionEnded} from connection threads, the rest on the accept thread ({@code
 * spindle-bridge-accept}); all are daemons. Owns the connection threads and the channels it
 * accepted (each closed by its session, or by {@link #closeAndJoin}); the listening socket and the
 * {@code closed} flag are the server's.
 */
final class ConnectionAcceptor {
  // the server's logger: these lines keep the category they always had
  private static final Logger LOG = LoggerFactory.getLogger(BridgeServer.class);
  private final BridgeServer server;
  private final ServerSocketChannel listening;
  private final BridgeServer.Acceptor accept;
  private final AtomicBoolean closed;
  private final Thread thread;
  private final AtomicBoolean atCap = new AtomicBoolean();
  private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  private final AtomicInteger ids = new AtomicInteger();

  /**
   * Accepts on {@code listening} through {@code accept} for {@code server}, once started, until
   * {@code closed} is set or the socket is closed.
   */
  ConnectionAcceptor(
      BridgeServer server,
      ServerSocketChannel listening,
      BridgeServer.Acceptor accept,
      AtomicBoolean closed) {
    this.server = server;
    this.listening = listening;
    this.accept = accept;
    this.closed = closed;
    this.thread = new Thread(this::acceptLoop, "spindle-bridge-accept");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Connections open now (trainers and peers in their handshake). */
  int openCount() {
    return open.size();
  }

  /** A connection thread ends (called on it). */
  void sessionEnded() {
    threads.remove(Thread.currentThread());
  }

  /**
   * Closes every open connection, then waits up to 10 s for the accept thread and each connection
   * thread to end. Call after the server set {@code closed} and closed the listening socket.
   */
  void closeAndJoin() throws IOException, InterruptedException {
    for (SocketChannel ch : open) {
      ch.close();
    }
    thread.join(10_000);
    for (Thread t : threads) {
      t.join(10_000);
    }
  }

  /** Accepts until closed. */
  private void acceptLoop() {
    long backoffMs = 0;
    while (!closed.get()) {
      SocketChannel ch;
      try {
        ch = accept.accept(listening);
      } catch (ClosedChannelException e) {
        return; // close() closed the socket
      } catch (IOException e) {
        if (closed.get()) {
          return;
        }
        backoffMs = Math.min(1000, Math.max(10, 2 * backoffMs));
        LOG.warn(
            "Bridge accept on {} failed ({}); trying again in {} ms",
            server.socketPath(),
            e.toString(),
            backoffMs);
        if (!pause(backoffMs)) {
          return;
        }
        continue;
      }
      backoffMs = 0;
      admit(ch);
    }
  }

  /** Starts a connection thread for {@code ch}, or refuses it at once past the cap. */
  private void admit(SocketChannel ch) {
    int max = server.admission().maxConnections();
    if (open.size() >= max) {
      server.refused.incrementAndGet();
      if (atCap.compareAndSet(false, true)) {
        LOG.warn(
            "Bridge on {} has its maximum of {} connections open; refusing new ones",
            server.socketPath(),
            max);
      }
      TrainerSession.refuseAtOnce(
          ch,
          BridgeError.BUSY,
          "Invalid connection: this bridge has "
              + "its maximum of "
              + max
              + " connections open (a peer that sends no HELLO within "
              + server.handshake()
              + " is dropped)");
      return;
    }
    atCap.set(false);
    open.add(ch);
    if (closed.get()) { // accepted as close() began: close() may not have seen it in `open`
      open.remove(ch);
      closeQuietly(ch);
      return;
    }
    int id = ids.incrementAndGet();
    Thread t =
        new Thread(
            () -> {
              try {
                new TrainerSession(server, ch, id).run();
              } finally {
                open.remove(ch);
              }
            },
            "spindle-bridge-conn-" + id);
    t.setDaemon(true);
    threads.add(t);
    t.start();
  }

  private static void closeQuietly(SocketChannel ch) {
    try {
      ch.close();
    } catch (IOException e) {
      LOG.debug("Closing a bridge connection accepted while the bridge closed", e);
    }
  }

  private static boolean pause(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
