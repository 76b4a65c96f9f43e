package dev.spindle.gpu.bridge;

import dev.spindle.gpu.device.SharedMemoryDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves feeders' batches to trainer processes on the same node over a Unix-domain socket (the
 * protocol is {@code loader-gpu/python/PROTOCOL.md}). Each rank served here has its own feeder,
 * opened on a {@link SharedMemoryDevice} (trainers map its slab file once) or on a CUDA device
 * (trainers open its device slab once by CUDA IPC, exported when the server starts); either way
 * they receive per-batch offsets. A trainer says hello with the run's token (see {@link RunToken};
 * any other connection is refused before it can touch a rank), its rank and device; the server
 * refuses ranks outside the world size, ranks not served here, ranks that already have a trainer
 * and devices the rank's memory cannot reach, with a clear ERROR, and keeps serving the others. A
 * trainer that disconnects or dies has its leases revoked; the batches it held go first to the next
 * trainer of its rank, which resumes where the last one stopped.
 *
 * <p>Ranks served later: a server started with {@link #listen} serves no rank at first; a producer
 * adds one with {@link #serve(RankFeed)} once it knows where the rank starts, for which it may
 * first wait for the rank's trainer with {@link #awaitTrainer} (the trainer's HELLO carries its
 * resume point). A trainer whose rank is not served yet, or whose last feed has finished, waits in
 * its handshake until the rank is served.
 *
 * <p>Threads: one accept thread, one thread per connection (at most {@link
 * Admission#maxConnections}) and a handshake timer, all named {@code spindle-bridge-*} daemons.
 * {@link #close()} from any thread, idempotent. Ownership: the server owns its socket and threads;
 * the feeders stay the caller's (close the server first, then the feeders).
 *
 * <p>Parts: this class is the server's lifecycle (socket, token file, close) and its API; {@code
 * ConnectionAcceptor} is the accept thread and the connection threads it starts, {@code
 * ServedRanks} the rank → channel map and the HELLO's rank checks, {@code TrainerSession} one
 * connection.
 */
public final class BridgeServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BridgeServer.class);
  final int worldSize;
  final AtomicLong connected = new AtomicLong();
  final AtomicLong refused = new AtomicLong();
  final AtomicLong delivered = new AtomicLong();
  final AtomicLong revoked = new AtomicLong();
  private final ServedRanks ranks;
  private final Admission admission;
  private final Path socket;
  private final ServerSocketChannel server;
  private final ConnectionAcceptor connections;
  private final HandshakeTimer handshakes;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Takes the next connection off the listening socket (a seam for tests of accept errors). */
  @FunctionalInterface
  interface Acceptor {
    SocketChannel accept(ServerSocketChannel server) throws IOException;
  }

  private BridgeServer(
      Path socket,
      int worldSize,
      List<RankFeed> feeds,
      Duration lateWait,
      Admission admission,
      Acceptor accept)
      throws IOException {
    this.worldSize = worldSize;
    this.admission = admission;
    this.handshakes = new HandshakeTimer(admission.handshakeTimeout());
    this.ranks = new ServedRanks(worldSize, feeds, lateWait);
    this.socket = SocketPaths.prepare(socket);
    // The token file exists before the socket does: whoever sees the socket can read the token.
    SocketPaths.writeToken(this.socket, admission.token());
    this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      server.bind(UnixDomainSocketAddress.of(this.socket));
      SocketPaths.restrict(this.socket);
    } catch (IOException | RuntimeException e) {
      server.close();
      handshakes.close();
      SocketPaths.removeToken(this.socket);
      throw e;
    }
    this.connections = new ConnectionAcceptor(this, server, accept, closed);
    connections.start();
    LOG.info(
        "Spindle bridge listening on {} (world size {}, ranks {})",
        this.socket,
        worldSize,
        ranks.served());
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
  public static BridgeServer start(
      Path socket, int worldSize, List<RankFeed> feeds, Admission admission) {
    return start(socket, worldSize, feeds, admission, ServerSocketChannel::accept);
  }

  /** {@link #start} taking connections through {@code acceptor} (tests inject accept errors). */
  static BridgeServer start(
      Path socket, int worldSize, List<RankFeed> feeds, Admission admission, Acceptor acceptor) {
    if (worldSize < 1) {
      throw new IllegalArgumentException("Invalid world size: " + worldSize + " (must be >= 1)");
    }
    if (feeds.isEmpty()) {
      throw new IllegalArgumentException("Invalid feeds: none (serve at least one rank)");
    }
    return open(socket, worldSize, feeds, null, admission, acceptor);
  }

  /**
   * Binds {@code socket} like {@link #start} but serves no rank yet: ranks come with {@link
   * #serve(RankFeed)}. A trainer of an unserved rank waits up to {@code trainerWait} in its
   * handshake, then is refused with BAD_RANK.
   */
  public static BridgeServer listen(
      Path socket, int worldSize, Duration trainerWait, Admission admission) {
    if (worldSize < 1) {
      throw new IllegalArgumentException("Invalid world size: " + worldSize + " (must be >= 1)");
    }
    if (trainerWait == null || trainerWait.isNegative() || trainerWait.isZero()) {
      throw new IllegalArgumentException("Invalid trainer wait: " + trainerWait + " (must be > 0)");
    }
    return open(socket, worldSize, List.of(), trainerWait, admission, ServerSocketChannel::accept);
  }

  private static BridgeServer open(
      Path socket,
      int world,
      List<RankFeed> feeds,
      Duration wait,
      Admission admission,
      Acceptor acceptor) {
    try {
      return new BridgeServer(socket, world, feeds, wait, admission, acceptor);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot listen on " + socket, e);
    }
  }

  /** The world size trainers must state. */
  public int worldSize() {
    return worldSize;
  }

  /**
   * Serves {@code feed} from now on (servers from {@link #listen} only): batch numbers start at
   * {@code feed.firstBatch()} with the next batch offered to its feeder (batches the feeder held
   * from an earlier feed are dropped unseen), and the trainer gets END after batch {@code
   * feed.endBatch() - 1}, which must be known. Replaces the rank's earlier feed, releasing what it
   * still held, and wakes the rank's waiting trainer.
   */
  public void serve(RankFeed feed) {
    ranks.serve(feed, feed.feeder().stats().ring().published());
  }

  /**
   * {@link #serve(RankFeed)} for a feed whose producer may have run ahead: batch {@code
   * feed.firstBatch()} is the feeder's batch of sequence {@code feederSequence} (the number of
   * batches the feeder had published when the producer started this feed), whether it is published
   * already or not; the feeder's batches before it are dropped unseen. A producer thus fills the
   * ring while the trainer starts, or while it finishes the rank's previous feed (whose channel
   * never takes a batch past its own end), and serves the feed once the trainer said hello.
   *
   * @throws IllegalArgumentException if {@code feederSequence} is negative
   */
  public void serve(RankFeed feed, long feederSequence) {
    if (feederSequence < 0) {
      throw new IllegalArgumentException(
          "Invalid feeder sequence for rank " + feed.rank() + ": " + feederSequence);
    }
    ranks.serve(feed, feederSequence);
  }

  /**
   * Waits until a trainer of {@code rank} is in its handshake waiting to be served (servers from
   * {@link #listen} only) and returns its resume point: the batches of the current leg its state
   * says it consumed (in {@code 0..batches}), or -1 when it stated none. A waiting trainer whose
   * resume point is outside {@code 0..batches} (the rank's planned batches), or whose state is of
   * another plan than {@code loaderState} (the state the caller will serve; see {@link
   * RankFeed#loaderState}), is refused with BAD_RESUME and the wait goes on: a stale or bogus
   * trainer never decides where the rank starts, nor fails the caller.
   *
   * @throws TimeoutException if no fitting trainer of the rank came within {@code timeout}
   * @throws IllegalArgumentException if {@code loaderState} is neither "" nor a JSON object
   */
  public long awaitTrainer(int rank, Duration timeout, String loaderState, long batches)
      throws TimeoutException, InterruptedException {
    return ranks.awaitTrainer(rank, timeout, loaderState, batches, closed);
  }

  /**
   * Waits until the rank's current feed has finished: its trainer received END and holds nothing.
   * True if it finished within {@code timeout}.
   */
  public boolean awaitFinished(int rank, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      RankChannel c = ranks.channel(rank);
      if (c != null && c.finished()) {
        return true;
      }
      if (System.nanoTime() >= deadline || closed.get()) {
        return false;
      }
      Thread.sleep(2); // called near a leg's end: train's next leg waits on it
    }
  }

  /**
   * How {@code rank}'s last trainer left while it held batches (it died: killed or crashed), for
   * the failure of a rank that no trainer took since; null if it ended with BYE, held nothing, or a
   * trainer took the rank since. Any thread.
   */
  public String departedTrainer(int rank) {
    RankChannel c = ranks.channel(rank);
    return c == null ? null : c.departed();
  }

  /**
   * The trainer of {@code rank} that holds batches now, for the failure of a rank whose trainer
   * kept a batch too long: {@code pid 1234, connection 3} (the pid its HELLO stated) and the
   * numbers of the batches it holds (positions in the rank's epoch); empty when no trainer of the
   * rank holds a batch. Any thread.
   */
  public Optional<HeldBatches> heldBatches(int rank) {
    RankChannel c = ranks.channel(rank);
    RankChannel.Holder h = c == null ? null : c.holder();
    return h == null
        ? Optional.empty()
        : Optional.of(new HeldBatches(rank, h.trainer(), h.batches()));
  }

  /**
   * A rank's batches a trainer holds: the rank, the trainer ({@code pid 1234, connection 3}) and
   * the batches' numbers, in order.
   */
  public record HeldBatches(int rank, String trainer, List<Long> batches) {}

  /** Stops serving {@code rank} (its producer failed); its trainer's next request fails. */
  public void unserve(int rank) {
    ranks.unserve(rank);
  }

  /** The socket trainers connect to. */
  public Path socketPath() {
    return socket;
  }

  /** The file beside the socket that holds the run's token (0600) while the bridge runs. */
  public Path tokenFile() {
    return SocketPaths.tokenFile(socket);
  }

  /** Who may connect: the run token (and limits) this bridge was started with. */
  public Admission admission() {
    return admission;
  }

  /** Counters now. */
  public BridgeStats stats() {
    return new BridgeStats(
        connected.get(), refused.get(), delivered.get(), revoked.get(), connections.openCount());
  }

  /**
   * Refuses a HELLO without this run's token before anything else is looked at.
   *
   * @throws ProtocolException BAD_TOKEN (never naming what was presented)
   */
  void checkToken(String presented) {
    if (admission.token().matches(presented)) {
      return;
    }
    String what =
        presented.isEmpty()
            ? "none presented"
            : "the " + presented.length() + " characters presented are not this feed run's token";
    throw new ProtocolException(
        BridgeError.BAD_TOKEN,
        "Invalid run token: "
            + what
            + " (a trainer must present its feed run's token: "
            + RunToken.ENV
            + " or SpindleLoader("
            + "token=...); this feeder wrote it to "
            + tokenFile()
            + ")");
  }

  /**
   * The channel of the rank a HELLO asks for (see {@link ServedRanks#forHello}).
   *
   * @throws ProtocolException when the world, rank, device or resume point does not fit
   */
  RankChannel rankFor(Hello h) throws InterruptedException {
    return ranks.forHello(h, closed);
  }

  void checkOpen() {
    if (closed.get()) {
      throw new ProtocolException(BridgeError.FEEDER_FAILED, "The bridge is shutting down");
    }
  }

  /** A connection thread ends (called on it). */
  void sessionEnded() {
    connections.sessionEnded();
  }

  /** A new connection's handshake deadline (connection threads). */
  HandshakeTimer.Pending handshakeStarted(SocketChannel ch) {
    return handshakes.start(ch);
  }

  /** The handshake timeout, for messages. */
  String handshake() {
    return handshakes.describe();
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
    ranks.wakeAll();
    handshakes.close();
    try {
      server.close();
      connections.closeAndJoin();
    } catch (IOException e) {
      LOG.warn("Closing the bridge on {}", socket, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ranks.releaseAll();
    SocketPaths.remove(socket);
    SocketPaths.removeToken(socket);
    LOG.info("Spindle bridge on {} closed: {}", socket, stats());
  }
}
