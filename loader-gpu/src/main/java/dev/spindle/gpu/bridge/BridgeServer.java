package dev.spindle.gpu.bridge;

import dev.spindle.gpu.device.DeviceKind;
import dev.spindle.gpu.device.SharedMemoryDevice;
import dev.spindle.gpu.feed.GpuFeeder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves feeders' batches to trainer processes on the same node over a Unix-domain socket (the
 * protocol is {@code loader-gpu/python/PROTOCOL.md}). Each rank served here has its own feeder,
 * opened on a {@link SharedMemoryDevice} (trainers map its slab file once) or on a CUDA device
 * (trainers open its device slab once by CUDA IPC, exported when the server starts); either way
 * they receive per-batch offsets. A trainer says hello with its rank and device; the server
 * refuses ranks outside the world size, ranks not served here, ranks that already have a trainer
 * and devices the rank's memory cannot reach, with a clear ERROR, and keeps serving the others.
 * A trainer that disconnects or dies has its leases revoked; the batches it held go first to the
 * next trainer of its rank, which resumes where the last one stopped.
 *
 * <p>Threads: one accept thread and one thread per connection, all named {@code spindle-bridge-*}
 * daemons. {@link #close()} from any thread, idempotent. Ownership: the server owns its socket
 * and threads; the feeders stay the caller's (close the server first, then the feeders).
 */
public final class BridgeServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BridgeServer.class);
  final int worldSize;
  final AtomicLong connected = new AtomicLong();
  final AtomicLong refused = new AtomicLong();
  final AtomicLong delivered = new AtomicLong();
  final AtomicLong revoked = new AtomicLong();
  private final Map<Integer, RankChannel> ranks = new TreeMap<>();
  private final Path socket;
  private final ServerSocketChannel server;
  private final Thread acceptor;
  private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  private final AtomicInteger ids = new AtomicInteger();
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * What one rank receives.
   *
   * @param rank the trainer rank, 0 ≤ rank &lt; world size
   * @param feeder its feeder, on a {@link SharedMemoryDevice} or a CUDA device
   * @param firstBatch number of the feeder's first batch in the rank's epoch (batches consumed
   *     when the feed job started: non-zero after a resume)
   * @param loaderState the loader state JSON the feed job started from, handed to trainers as
   *     the base of their {@code state_dict()} ("" if none)
   */
  public record RankFeed(int rank, GpuFeeder feeder, long firstBatch, String loaderState) {
    /** Validates. */
    public RankFeed {
      if (rank < 0) {
        throw new IllegalArgumentException("Invalid rank: " + rank + " (must be >= 0)");
      }
      if (firstBatch < 0) {
        throw new IllegalArgumentException("Invalid first batch: " + firstBatch
            + " (must be >= 0)");
      }
      if (!(feeder.device() instanceof SharedMemoryDevice)
          && feeder.device().kind() != DeviceKind.CUDA) {
        throw new IllegalArgumentException("Invalid feeder for rank " + rank + ": it runs on "
            + feeder.device().description() + ", whose memory another process cannot map "
            + "(open it on a SharedMemoryDevice or a CUDA device)");
      }
      loaderState = loaderState == null ? "" : loaderState;
    }
  }

  /** Counters since start; any thread. */
  public record Stats(long trainersConnected, long refused, long batchesDelivered,
      long leasesRevoked) {}

  private BridgeServer(Path socket, int worldSize, List<RankFeed> feeds) throws IOException {
    this.worldSize = worldSize;
    for (RankFeed f : feeds) {
      if (f.rank() >= worldSize) {
        throw new IllegalArgumentException("Invalid rank: " + f.rank() + " (world size "
            + worldSize + ")");
      }
      if (ranks.put(f.rank(), new RankChannel(f.rank(), f.feeder(),
          ServedMemory.of(f.rank(), f.feeder()), f.firstBatch(), f.loaderState())) != null) {
        throw new IllegalArgumentException("Invalid feeds: rank " + f.rank() + " twice");
      }
    }
    this.socket = SocketPaths.prepare(socket);
    this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      server.bind(UnixDomainSocketAddress.of(this.socket));
      SocketPaths.restrict(this.socket);
    } catch (IOException | RuntimeException e) {
      server.close();
      throw e;
    }
    this.acceptor = new Thread(this::acceptLoop, "spindle-bridge-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    LOG.info("Spindle bridge listening on {} (world size {}, ranks {})", this.socket, worldSize,
        ranks.keySet());
  }

  /**
   * Binds {@code socket} (its directory is created 0700 if missing; the socket is made 0600) and
   * starts serving {@code feeds}.
   *
   * @throws IllegalArgumentException for a bad rank list, a feeder whose memory another process
   *     cannot map, or a socket path that exists and belongs to another user or is not a stale
   *     socket of ours
   * @throws RuntimeException from the CUDA driver if a CUDA feeder's slab cannot be exported
   */
  public static BridgeServer start(Path socket, int worldSize, List<RankFeed> feeds) {
    if (worldSize < 1) {
      throw new IllegalArgumentException("Invalid world size: " + worldSize + " (must be >= 1)");
    }
    if (feeds.isEmpty()) {
      throw new IllegalArgumentException("Invalid feeds: none (serve at least one rank)");
    }
    try {
      return new BridgeServer(socket, worldSize, feeds);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot listen on " + socket, e);
    }
  }

  /** The socket trainers connect to. */
  public Path socketPath() {
    return socket;
  }

  /** Counters now. */
  public Stats stats() {
    return new Stats(connected.get(), refused.get(), delivered.get(), revoked.get());
  }

  RankChannel rankFor(int rank, int world, String device) {
    if (world != worldSize) {
      throw new ProtocolException(BridgeError.BAD_RANK, "Invalid world size: " + world
          + " (this feeder serves world size " + worldSize + ")");
    }
    if (rank < 0 || rank >= worldSize) {
      throw new ProtocolException(BridgeError.BAD_RANK, "Invalid rank: " + rank + " (world size "
          + worldSize + ": must be 0.." + (worldSize - 1) + ")");
    }
    RankChannel c = ranks.get(rank);
    if (c == null) {
      throw new ProtocolException(BridgeError.BAD_RANK, "Rank " + rank
          + " is not served by this feeder (ranks here: " + ranks.keySet() + ")");
    }
    c.memory.accept(device, rank);
    return c;
  }

  void checkOpen() {
    if (closed.get()) {
      throw new ProtocolException(BridgeError.FEEDER_FAILED, "The bridge is shutting down");
    }
  }

  void sessionEnded(TrainerSession s) {
    threads.remove(Thread.currentThread());
  }

  private void acceptLoop() {
    while (!closed.get()) {
      try {
        SocketChannel ch = server.accept();
        int id = ids.incrementAndGet();
        open.add(ch);
        Thread t = new Thread(() -> {
          try {
            new TrainerSession(this, ch, id).run();
          } finally {
            open.remove(ch);
          }
        }, "spindle-bridge-conn-" + id);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      } catch (IOException e) {
        if (!closed.get()) {
          LOG.error("Bridge accept on {} failed; no new trainers can connect", socket, e);
        }
        return;
      }
    }
  }

  /**
   * Stops accepting, disconnects every trainer (their batches are released), removes the socket
   * file. Idempotent; the feeders stay open.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      server.close();
      for (SocketChannel ch : open) {
        ch.close();
      }
      acceptor.join(10_000);
      for (Thread t : threads) {
        t.join(10_000);
      }
    } catch (IOException e) {
      LOG.warn("Closing the bridge on {}", socket, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ranks.values().forEach(RankChannel::releaseAll);
    SocketPaths.remove(socket);
    LOG.info("Spindle bridge on {} closed: {}", socket, stats());
  }
}
