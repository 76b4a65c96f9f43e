package dev.spindle.spark.shard;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.util.functional.FutureIO;

/**
 * Reads the planned samples of an uncompressed tar through its member index ({@link TarIndex}):
 * each planned sample's byte range, neighbours whose gap is at most {@code
 * spark.spindle.io.coalesceBytes} joined into one ranged read (up to {@value #MAX_RANGE_BYTES}
 * bytes, never splitting a sample), every read started at once on the executor's range-read threads
 * ({@link RangeReadPool}) when the reader is opened, so the reads of all the shards a read group
 * opens overlap. Members between planned samples are never read. Each sample's bytes are parsed by
 * the same code as a sequential read ({@link TarShardReader#sampleAt}): the samples are identical
 * (bytes, key, position, problems). A range is read through its own stream, opened with the shard's
 * known length and the {@code random} read policy ({@code FileSystem.openFile}: on S3A a bounded
 * ranged GET and no HEAD; HDFS reads it positioned), so reads never contend for one stream's lock;
 * a local file's ranges are positioned reads of one stream opened once ({@code pread}s, which take
 * no lock). With the shard cache on ({@link ShardCache}) the ranges are read from the shard's local
 * copy instead, fetched whole on a miss. Without a usable index (none written, damaged, taken of
 * another version of the shard) the shard is read whole, in order ({@link TarShardReader}), as
 * before indexes existed.
 *
 * <p>Consumed by one thread; the reads run on the pool. A storage failure surfaces from {@code
 * hasNext()} as an {@link UncheckedIOException} naming the shard. {@code close()} abandons reads
 * not yet consumed.
 */
final class IndexedTarReader implements ShardReader {
  /** The buffer of a local shard's stream, which only positioned reads (not buffered) use. */
  private static final int POSITIONED_BUFFER_BYTES = 512;

  /** Coalesced ranges stop growing here, bounding one read's memory (a sample may be larger). */
  static final long MAX_RANGE_BYTES = 16L << 20;

  private final Shard shard;
  private final Configuration conf;
  private final SampleLimits limits;
  private final int[] positions;
  private final IoCounters counters;
  private final CacheTally cache = new CacheTally();
  private final CompletableFuture<Plan> planned;
  private ShardReader whole; // the sequential reader, when there is no usable index
  private TarIndex index;
  private List<Range> ranges;
  private int range;
  private int next; // index into positions
  private String damage; // met while parsing a sample: the shard changed in place since indexed
  private Sample queued; // the damage's own sample, when it is planned
  private boolean stopped; // past damage: nothing more is yielded, as in a read in order
  private boolean closed;

  /** One ranged read: the samples {@code positions[first..last)} lie in {@code [from, to)}. */
  private record Range(long from, long to, int first, int last, CompletableFuture<byte[]> bytes) {}

  /**
   * The index and the reads started from it; {@code local} is the one stream they read (the shard
   * cache's copy, or the shard itself when it is a local file), or null when each opens its own.
   */
  private record Plan(TarIndex index, List<Range> ranges, FSDataInputStream local) {}

  IndexedTarReader(
      Shard shard,
      Configuration conf,
      SampleLimits limits,
      int[] positions,
      IoSettings io,
      IoCounters counters) {
    this.shard = shard;
    this.conf = conf;
    this.limits = limits;
    this.positions = positions;
    this.counters = counters;
    Executor pool = RangeReadPool.sized(io.concurrency());
    this.planned =
        CompletableFuture.supplyAsync(
            () -> {
              TarIndex index = load(io.indexes());
              if (index == null) {
                return null;
              }
              FSDataInputStream copy = cached();
              FSDataInputStream local = copy != null ? copy : localFile();
              return new Plan(
                  index, start(index, io.coalesceBytes(), pool, local, copy == null), local);
            },
            pool);
  }

  private TarIndex load(TarIndexes where) {
    try {
      return TarIndexFiles.load(where, shard, conf, counters);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The shard cache's local copy of the shard ({@link ShardCache}: fetched whole on a miss, which
   * counts as one request for the shard's bytes), or null when the cache is off or cannot hold it.
   */
  private FSDataInputStream cached() {
    try {
      FSDataInputStream local = ShardCache.open(shard, conf, cache, () -> null);
      if (cache.counts().misses() > 0) {
        counters.request(shard.bytes());
      }
      return local;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The shard opened once for positioned reads when it is a file of this machine that Hadoop's
   * local file system reads without a checksum side file, else null (each range then opens a stream
   * of its own). A ranged read of it is then one {@code pread}, where opening a stream per range (a
   * {@link Path}, the file system's lookup, an {@code openFile} builder's options, a checksum
   * stream) cost as much CPU as a tenth of the image decode (measured with {@code
   * bin/bench-train-gap}: the range-read threads at 0.12 ms per image against 1.05 ms of decode). A
   * shard with a {@code .crc} side file is read as Hadoop opens it, so that the side file still
   * checks it.
   */
  private FSDataInputStream localFile() {
    Path path = new Path(shard.uri());
    try {
      FileSystem fs = path.getFileSystem(conf);
      if (fs instanceof LocalFileSystem checked) {
        if (checked.exists(checked.getChecksumFile(path))) {
          return null;
        }
        fs = checked.getRawFileSystem();
      }
      // only positioned reads, which pass by the stream's buffer: a small one, not Spark's 64 KiB
      return fs instanceof RawLocalFileSystem raw ? raw.open(path, POSITIONED_BUFFER_BYTES) : null;
    } catch (IOException e) {
      throw new UncheckedIOException("opening tar shard " + shard.uri() + ": " + e.getMessage(), e);
    }
  }

  /**
   * The planned samples' ranges, coalesced, each one's read already started: from {@code local}
   * when it is not null (the shard cache's copy, or the shard itself when it is a local file: then
   * each read counts as a request of {@code stored}), else through a stream per range.
   */
  private List<Range> start(
      TarIndex index, long coalesceBytes, Executor pool, FSDataInputStream local, boolean stored) {
    List<Range> out = new ArrayList<>();
    int first = 0;
    while (first < positions.length && positions[first] < index.samples()) {
      long from = index.start(positions[first]);
      long to = index.end(positions[first]);
      int last = first + 1;
      while (last < positions.length
          && positions[last] < index.samples()
          && index.start(positions[last]) - to <= coalesceBytes
          && index.end(positions[last]) - from <= MAX_RANGE_BYTES) {
        to = index.end(positions[last++]);
      }
      long f = from;
      long t = to;
      out.add(
          new Range(
              from,
              to,
              first,
              last,
              CompletableFuture.supplyAsync(
                  () -> local != null ? readLocal(local, f, t, stored) : read(f, t), pool)));
      first = last;
    }
    return out;
  }

  /**
   * One ranged read of a local file (positioned: the reads of one shard share it), the shard's own
   * when {@code stored} (counted as a storage request), else the shard cache's copy of it.
   */
  private byte[] readLocal(FSDataInputStream local, long from, long to, boolean stored) {
    byte[] bytes = new byte[Math.toIntExact(to - from)];
    try {
      local.readFully(from, bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "reading bytes "
              + from
              + ".."
              + to
              + " of "
              + (stored ? "" : "the cached copy of ")
              + shard.uri()
              + ": "
              + e.getMessage(),
          e);
    }
    if (stored) {
      counters.request(bytes.length);
    }
    return bytes;
  }

  /** One ranged read, through a stream of its own. */
  private byte[] read(long from, long to) {
    byte[] bytes = new byte[Math.toIntExact(to - from)];
    Path path = new Path(shard.uri());
    try (FSDataInputStream in =
        FutureIO.awaitFuture(
            path.getFileSystem(conf)
                .openFile(path)
                .opt(
                    Options.OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY,
                    Options.OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY_RANDOM)
                .opt(
                    Options.OpenFileOptions.FS_OPTION_OPENFILE_LENGTH, Long.toString(shard.bytes()))
                .build())) {
      in.readFully(from, bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "reading bytes " + from + ".." + to + " of " + shard.uri() + ": " + e.getMessage(), e);
    }
    counters.request(bytes.length);
    return bytes;
  }

  @Override
  public boolean hasNext() {
    if (closed) {
      return false;
    }
    if (ranges == null && whole == null) {
      Plan plan = await(planned);
      if (plan == null) {
        whole = sequential();
      } else {
        counters.opened(true, false);
        index = plan.index();
        ranges = plan.ranges();
      }
    }
    if (whole != null) {
      return whole.hasNext();
    }
    return queued != null || (!stopped && range < ranges.size());
  }

  @Override
  public Sample next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more samples in " + shard.uri());
    }
    if (whole != null) {
      return whole.next();
    }
    if (queued != null) {
      Sample s = queued;
      queued = null;
      stopped = true;
      return s;
    }
    Range r = ranges.get(range);
    byte[] bytes = await(r.bytes());
    int position = positions[next];
    TarShardReader.Parsed parsed = sampleAt(bytes, r.from(), position);
    if (++next == r.last()) {
      range++;
    }
    if (parsed.damage() != null) {
      damaged(parsed, position);
    }
    return parsed.sample();
  }

  /**
   * Damage met inside a sample's bytes (the shard changed in place since it was indexed): as a read
   * in order, the damage is a sample of its own right after, and nothing after it is read.
   */
  private void damaged(TarShardReader.Parsed parsed, int position) {
    damage = parsed.damage();
    stopped = true;
    boolean itself = parsed.sample().key().equals(TarSampleCursor.DAMAGE_KEY);
    if (!itself && next < positions.length && positions[next] == position + 1) {
      queued = TarShardReader.damageSample(shard.uri(), position + 1, damage, limits);
    }
  }

  /**
   * The sample at {@code position}, parsed from its bytes inside a range read from {@code from}.
   */
  private TarShardReader.Parsed sampleAt(byte[] bytes, long from, int position) {
    int offset = Math.toIntExact(index.start(position) - from);
    int length = Math.toIntExact(index.end(position) - index.start(position));
    return TarShardReader.sampleAt(
        new ByteArrayInputStream(bytes, offset, length),
        shard.uri(),
        limits,
        position,
        index.start(position));
  }

  @Override
  public CacheCounts cacheCounts() {
    return whole != null ? whole.cacheCounts().plus(cache.counts()) : cache.counts();
  }

  @Override
  public String damage() {
    return whole != null ? whole.damage() : damage;
  }

  private ShardReader sequential() {
    try {
      return TarShardReader.open(shard, conf, limits, positions, counters);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Failed reading tar shard " + shard.uri() + ": " + e.getMessage(), e);
    }
  }

  private <T> T await(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException | CancellationException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      if (cause instanceof UncheckedIOException u) {
        cause = u.getCause();
      }
      throw new UncheckedIOException(
          "Failed reading tar shard " + shard.uri() + ": " + cause.getMessage(),
          cause instanceof IOException io ? io : new IOException(cause));
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    // not cancelled: a plan still being made opens its stream, which is closed once it is made
    planned.thenAccept(
        p -> {
          if (p != null) {
            p.ranges().forEach(r -> r.bytes().cancel(false));
            closeLocal(p.local());
          }
        });
    if (whole != null) {
      whole.close();
    }
  }

  private static void closeLocal(FSDataInputStream local) {
    if (local != null) {
      try {
        local.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
