package dev.spindle.spark.iobench;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.apache.hadoop.fs.ByteBufferPositionedReadable;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.VectoredReadUtils;

/**
 * A read stream of the counted store ({@link CountingFileSystem}): the wrapped file system's
 * stream, with every read counted in {@link StoreCounters} as an object store's client would issue
 * it, and the store's latency paid before each request's first byte.
 *
 * <p>The request model. A sequential read continues the request in flight when it starts where the
 * last one ended; otherwise (the open's first read, a read after a seek or skip to anywhere else)
 * it starts a new request. A seek or skip alone costs nothing (an object store's client seeks
 * lazily). Each positioned read ({@code read}/{@code readFully} at a position, byte arrays or
 * buffers) is one request, and so is each range of a vectored read; vectored ranges are read
 * concurrently, so their latencies overlap as a store's parallel GETs do. Bytes are those returned
 * to the caller: a buffer above this stream (a reader's {@code BufferedInputStream}) counts what it
 * pulled, as the store would have sent it.
 *
 * <p>Threads: the sequential calls are synchronized (one reader at a time, as Hadoop's streams
 * are); positioned and vectored reads may come from any thread at once, each waiting its own
 * latency. This stream owns the wrapped one and closes it.
 */
final class CountedInputStream extends FSInputStream
    implements ByteBufferReadable, ByteBufferPositionedReadable, StreamCapabilities {
  /** Runs vectored ranges; daemon threads, shared by every stream of the JVM. */
  private static final ExecutorService RANGES =
      Executors.newCachedThreadPool(
          new java.util.concurrent.ThreadFactory() {
            private final AtomicInteger n = new AtomicInteger();

            @Override
            public Thread newThread(Runnable r) {
              Thread t = new Thread(r, "counted-store-range-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            }
          });

  private final FSDataInputStream in;
  private final long latencyNanos;
  private final Path path;
  private long next = -1; // the position the request in flight would deliver next; -1: none

  CountedInputStream(FSDataInputStream in, long latencyNanos, Path path) {
    this.in = in;
    this.latencyNanos = latencyNanos;
    this.path = path;
  }

  @Override
  public synchronized int read() throws IOException {
    long at = in.getPos();
    continueOrRequest(at);
    int b = in.read();
    if (b >= 0) {
      StoreCounters.returned(1);
      next = at + 1;
    }
    return b;
  }

  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    long at = in.getPos();
    continueOrRequest(at);
    int n = in.read(b, off, len);
    if (n > 0) {
      StoreCounters.returned(n);
      next = at + n;
    }
    return n;
  }

  @Override
  public synchronized int read(ByteBuffer buf) throws IOException {
    byte[] bytes = new byte[buf.remaining()];
    int n = read(bytes, 0, bytes.length);
    if (n > 0) {
      buf.put(bytes, 0, n);
    }
    return n;
  }

  /** Moves the position; the next read after it starts a request unless it lands where one ends. */
  @Override
  public synchronized void seek(long pos) throws IOException {
    in.seek(pos);
  }

  /** The wrapped stream's skip (same bounds and result as reading the store directly), lazily. */
  @Override
  public synchronized long skip(long n) throws IOException {
    return in.skip(n);
  }

  @Override
  public synchronized long getPos() throws IOException {
    return in.getPos();
  }

  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public synchronized int available() throws IOException {
    return in.available();
  }

  @Override
  public int read(long position, byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    request();
    int n = in.read(position, b, off, len);
    StoreCounters.returned(n);
    return n;
  }

  @Override
  public void readFully(long position, byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return;
    }
    request();
    in.readFully(position, b, off, len);
    StoreCounters.returned(len);
  }

  @Override
  public void readFully(long position, byte[] b) throws IOException {
    readFully(position, b, 0, b.length);
  }

  @Override
  public int read(long position, ByteBuffer buf) throws IOException {
    byte[] bytes = new byte[buf.remaining()];
    int n = read(position, bytes, 0, bytes.length);
    if (n > 0) {
      buf.put(bytes, 0, n);
    }
    return n;
  }

  @Override
  public void readFully(long position, ByteBuffer buf) throws IOException {
    byte[] bytes = new byte[buf.remaining()];
    readFully(position, bytes, 0, bytes.length);
    buf.put(bytes);
  }

  @Override
  public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate)
      throws IOException {
    readVectored(ranges, allocate, b -> {});
  }

  /** Each range one request, all in flight at once; each range's future completes with its data. */
  @Override
  public void readVectored(
      List<? extends FileRange> ranges,
      IntFunction<ByteBuffer> allocate,
      Consumer<ByteBuffer> release)
      throws IOException {
    for (FileRange r : VectoredReadUtils.validateAndSortRanges(ranges, Optional.empty())) {
      CompletableFuture<ByteBuffer> data = new CompletableFuture<>();
      r.setData(data);
      RANGES.execute(() -> readRange(r, allocate, release, data));
    }
  }

  private void readRange(
      FileRange r,
      IntFunction<ByteBuffer> allocate,
      Consumer<ByteBuffer> release,
      CompletableFuture<ByteBuffer> data) {
    ByteBuffer buf = null;
    try {
      byte[] bytes = new byte[r.getLength()];
      readFully(r.getOffset(), bytes, 0, bytes.length);
      buf = allocate.apply(bytes.length);
      buf.put(bytes).flip();
      data.complete(buf);
    } catch (IOException | RuntimeException e) {
      if (buf != null) {
        release.accept(buf);
      }
      data.completeExceptionally(
          e instanceof EOFException ? e : new IOException("Range " + r + " of " + path, e));
    }
  }

  @Override
  public boolean hasCapability(String capability) {
    return switch (capability.toLowerCase(Locale.ROOT)) {
      case StreamCapabilities.READBYTEBUFFER,
          StreamCapabilities.PREADBYTEBUFFER,
          StreamCapabilities.VECTOREDIO ->
          true;
      default -> false;
    };
  }

  @Override
  public void close() throws IOException {
    in.close();
  }

  @Override
  public String toString() {
    return "counted stream of " + path;
  }

  /** A sequential read at {@code at}: continues the request in flight there, or starts one. */
  private void continueOrRequest(long at) throws IOException {
    if (at != next) {
      request();
      next = at;
    }
  }

  /** One request: counted, then the store's latency before its first byte. */
  private void request() throws IOException {
    StoreCounters.requested();
    CountingFileSystem.pause(latencyNanos);
  }
}
