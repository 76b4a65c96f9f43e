package dev.spindle.gpu.bridge;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The ranks one {@link BridgeServer} serves, and which rank a trainer's HELLO gets: the rank →
 * channel map, fixed when the server starts ({@link BridgeServer#start}), or changed while it runs
 * ({@link BridgeServer#listen}: ranks served and unserved through {@link LateRanks}, whose monitor
 * then guards the map).
 *
 * <p>Threads: connection threads ({@link #forHello}, {@link #channel}), producers ({@link #serve},
 * {@link #unserve}, {@link #awaitTrainer}) and the server's close; a fixed map is only read after
 * construction. Owns the map and its channels (whose batches {@link #releaseAll} releases); the
 * feeders stay the caller's.
 */
final class ServedRanks {
  private final int worldSize;
  private final Map<Integer, RankChannel> ranks = new TreeMap<>();
  private final LateRanks late;

  /**
   * Serves {@code feeds} (each rank below {@code worldSize}, at most once); with {@code lateWait}
   * (null for a fixed map), ranks may also be served later, and a trainer of an unserved rank waits
   * that long for it.
   */
  ServedRanks(int worldSize, List<RankFeed> feeds, Duration lateWait) {
    this.worldSize = worldSize;
    this.late = lateWait == null ? null : new LateRanks(lateWait);
    for (RankFeed f : feeds) {
      if (f.rank() >= worldSize) {
        throw new IllegalArgumentException(
            "Invalid rank: " + f.rank() + " (world size " + worldSize + ")");
      }
      if (ranks.put(f.rank(), new RankChannel(f, ServedMemory.of(f.rank(), f.feeder()))) != null) {
        throw new IllegalArgumentException("Invalid feeds: rank " + f.rank() + " twice");
      }
    }
  }

  /** The ranks served now, in order (a live view, for messages). */
  Set<Integer> served() {
    return ranks.keySet();
  }

  /** The rank's current channel, or null. */
  RankChannel channel(int rank) {
    return late == null ? ranks.get(rank) : late.channel(rank, ranks);
  }

  /**
   * {@link BridgeServer#serve(RankFeed, long)}: checks {@code feed}, then replaces the rank's feed;
   * its first batch is the feeder's of sequence {@code seqBase}.
   */
  void serve(RankFeed feed, long seqBase) {
    requireLate();
    if (feed.rank() >= worldSize || feed.endBatch() == RankFeed.UNKNOWN_END) {
      throw new IllegalArgumentException(
          "Invalid feed: rank "
              + feed.rank()
              + ", batches "
              + feed.firstBatch()
              + ".."
              + (feed.endBatch() == RankFeed.UNKNOWN_END ? "(unknown)" : feed.endBatch())
              + " (world size "
              + worldSize
              + "; a rank served later has a "
              + "planned end)");
    }
    late.serve(
        feed.rank(),
        new RankChannel(feed, ServedMemory.of(feed.rank(), feed.feeder()), seqBase),
        ranks);
  }

  /** {@link BridgeServer#awaitTrainer}. */
  long awaitTrainer(
      int rank, Duration timeout, String loaderState, long batches, AtomicBoolean closed)
      throws TimeoutException, InterruptedException {
    requireLate();
    return late.awaitTrainer(rank, timeout, PlanIdentity.of(loaderState), batches, closed);
  }

  /** {@link BridgeServer#unserve}. */
  void unserve(int rank) {
    requireLate();
    late.unserve(rank, ranks);
  }

  private void requireLate() {
    if (late == null) {
      throw new IllegalStateException("This bridge was started with fixed ranks; use listen()");
    }
  }

  /**
   * The channel of the rank {@code h} asks for, once its world size, rank, device and resume point
   * fit (waiting, on a server of late ranks, until the rank is served).
   *
   * @throws ProtocolException naming why the HELLO does not fit (BAD_RANK, RANK_TAKEN,
   *     UNSUPPORTED_DEVICE, BAD_RESUME; FEEDER_FAILED while the bridge closes)
   */
  RankChannel forHello(Hello h, AtomicBoolean closed) throws InterruptedException {
    int rank = h.rank();
    int world = h.world();
    if (world != worldSize) {
      throw new ProtocolException(
          BridgeError.BAD_RANK,
          "Invalid world size: " + world + " (this feeder serves world size " + worldSize + ")");
    }
    if (rank < 0 || rank >= worldSize) {
      throw new ProtocolException(
          BridgeError.BAD_RANK,
          "Invalid rank: "
              + rank
              + " (world size "
              + worldSize
              + ": must be 0.."
              + (worldSize - 1)
              + ")");
    }
    RankChannel c =
        late == null
            ? ranks.get(rank)
            : late.awaitServed(rank, h.resume(), h.plan(), ranks, closed);
    if (c == null) {
      throw new ProtocolException(
          BridgeError.BAD_RANK,
          "Rank " + rank + " is not served by this feeder (ranks here: " + ranks.keySet() + ")");
    }
    c.memory.accept(h.device(), rank);
    ResumeCheck.range(rank, h.resume(), c.endBatch());
    ResumeCheck.plan(rank, c.plan, h.resume(), h.plan());
    return c;
  }

  /** Wakes the trainers and producers waiting for a rank (the server is closing). */
  void wakeAll() {
    if (late != null) {
      late.wakeAll();
    }
  }

  /** Releases every batch the channels still hold (the server has closed). */
  void releaseAll() {
    if (late != null) {
      late.releaseAll(ranks);
    } else {
      ranks.values().forEach(RankChannel::releaseAll);
    }
  }
}
