package dev.spindle.spark.iobench;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the counted store ({@link CountingFileSystem}) was asked for, across the JVM: every instance
 * and stream adds here, from any thread. Counters only grow; a caller measures a stretch of work as
 * the difference of two {@link #snapshot()}s ({@link Counts#minus}), so concurrent users never
 * reset each other's figures.
 */
public final class StoreCounters {
  private static final LongAdder OPENS = new LongAdder();
  private static final LongAdder REQUESTS = new LongAdder();
  private static final LongAdder BYTES = new LongAdder();
  private static final LongAdder LISTINGS = new LongAdder();
  private static final LongAdder STATUSES = new LongAdder();
  private static final AtomicInteger WAITING = new AtomicInteger();
  private static final AtomicInteger PEAK_WAITING = new AtomicInteger();

  private StoreCounters() {}

  /**
   * The counters at one moment.
   *
   * @param opens files opened for reading (an open alone costs no request)
   * @param requests read requests as an object store sees them: an open stream's first read, each
   *     read after a non-contiguous seek or skip, each positioned read, each vectored range
   * @param bytes bytes the store returned to its callers
   * @param listings listing calls (a LIST)
   * @param statuses status calls (a HEAD)
   */
  public record Counts(long opens, long requests, long bytes, long listings, long statuses) {
    /** This minus an earlier snapshot: what happened in between. */
    public Counts minus(Counts earlier) {
      return new Counts(
          opens - earlier.opens,
          requests - earlier.requests,
          bytes - earlier.bytes,
          listings - earlier.listings,
          statuses - earlier.statuses);
    }
  }

  /** The counters now. */
  public static Counts snapshot() {
    return new Counts(OPENS.sum(), REQUESTS.sum(), BYTES.sum(), LISTINGS.sum(), STATUSES.sum());
  }

  /**
   * The most calls that waited out the store's latency at the same time since the last call (the
   * first: since the JVM started), then starts over from those waiting now: whether requests
   * overlapped, as they do on a real store. Any thread.
   */
  public static int takePeakWaiting() {
    return PEAK_WAITING.getAndSet(WAITING.get());
  }

  /** A call starts waiting out the latency; {@link #doneWaiting} follows it, in a finally. */
  static void waiting() {
    PEAK_WAITING.accumulateAndGet(WAITING.incrementAndGet(), Math::max);
  }

  static void doneWaiting() {
    WAITING.decrementAndGet();
  }

  static void opened() {
    OPENS.increment();
  }

  static void requested() {
    REQUESTS.increment();
  }

  static void returned(long bytes) {
    if (bytes > 0) {
      BYTES.add(bytes);
    }
  }

  static void listed() {
    LISTINGS.increment();
  }

  static void statused() {
    STATUSES.increment();
  }
}
