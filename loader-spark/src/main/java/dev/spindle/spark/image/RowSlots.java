package dev.spindle.spark.image;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Row slots in batch buffers for a stream of samples, so that workers write each sample straight
 * into the batch it will be handed out in, with no per-sample buffer and no copy.
 *
 * <p>Stream position {@code p} (0-based, in source order) owns row {@code p % batchSize} of batch
 * buffer {@code p / batchSize}. A worker {@link #claim}s its position's {@link Row}, writes {@link
 * #rowBytes} at {@link Row#offset()} of {@link Row#buffer()}, and passes the row on (or closes it
 * when the sample failed). The consumer gets rows grouped into batches by the engine's aggregate
 * and calls {@link #whole}: when the group is exactly the rows of one buffer, in order (no sample
 * of it failed), that buffer is the batch. Otherwise (a failed sample shifted the grouping) the
 * caller copies the rows into a batch of its own. A buffer goes back to a small pool when all its
 * rows are closed; closing a row twice is harmless.
 *
 * <p>Thread-safe: workers claim and close rows concurrently with the consumer. {@link #close} frees
 * pooled buffers and every buffer whose rows are all closed; a buffer with rows still open (a
 * worker still writing) is freed when its last row closes.
 */
final class RowSlots implements AutoCloseable {
  private final BufferAllocator allocator;
  private final int batchSize;
  private final long rowBytes;
  private final int poolSize;
  private final Map<Long, Batch> open = new HashMap<>();
  private final ArrayDeque<ArrowBuf> pool = new ArrayDeque<>();
  private long total;
  private boolean closed;

  RowSlots(BufferAllocator allocator, int batchSize, long rowBytes, int poolSize) {
    this.allocator = allocator;
    this.batchSize = batchSize;
    this.rowBytes = rowBytes;
    this.poolSize = poolSize;
  }

  long rowBytes() {
    return rowBytes;
  }

  /**
   * Starts a new stream of {@code total} positions; positions of the previous stream can no longer
   * be claimed (their rows still close normally).
   */
  synchronized void restart(long total) {
    this.total = total;
    orphanAll();
  }

  /** The row of stream position {@code position}; the caller must close it. */
  Row claim(long position) {
    long index = position / batchSize;
    Batch b;
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("Row slots closed");
      }
      if (position < 0 || position >= total) {
        throw new IllegalArgumentException(
            "Invalid position: " + position + " (stream of " + total + ")");
      }
      b = open.get(index);
      if (b == null) {
        int rows = (int) Math.min(batchSize, total - index * batchSize);
        ArrowBuf buf = pool.isEmpty() ? allocator.buffer(batchSize * rowBytes) : pool.pop();
        b = new Batch(buf, rows);
        open.put(index, b);
      }
      b.claimed++;
    }
    return new Row(b, (int) (position - index * batchSize));
  }

  /**
   * The buffer that holds exactly {@code rows}, in order, with nothing else in it, or null. The
   * rows stay open: the caller closes them when done with the buffer.
   */
  ArrowBuf whole(List<Row> rows) {
    if (rows.isEmpty()) {
      return null;
    }
    Batch b = rows.get(0).batch;
    if (rows.size() != b.rows) {
      return null;
    }
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      if (r.batch != b || r.row != i) {
        return null;
      }
    }
    return b.buf;
  }

  private synchronized void done(Batch b) {
    b.finished++;
    release(b);
  }

  /** Frees or pools {@code b} once all its rows are closed (an orphan: all its claimed rows). */
  private void release(Batch b) {
    if (b.freed || (b.finished < b.rows && !(b.orphan && b.finished == b.claimed))) {
      return;
    }
    b.freed = true;
    open.values().remove(b);
    if (!closed && pool.size() < poolSize) {
      pool.push(b.buf);
    } else {
      b.buf.close();
    }
  }

  /** Forgets the open batches: each is freed as soon as its claimed rows are closed. */
  private void orphanAll() {
    for (Batch b : List.copyOf(open.values())) {
      b.orphan = true;
      release(b);
    }
    open.clear();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    pool.forEach(ArrowBuf::close);
    pool.clear();
    orphanAll();
  }

  /** One batch buffer and how many of its rows were claimed and closed. */
  private static final class Batch {
    final ArrowBuf buf;
    final int rows;
    int claimed;
    int finished;
    boolean orphan;
    boolean freed;

    Batch(ArrowBuf buf, int rows) {
      this.buf = buf;
      this.rows = rows;
    }
  }

  /** One row of a batch buffer; closing it (once counts) gives the row back. */
  final class Row implements AutoCloseable {
    private final Batch batch;
    private final int row;
    private boolean closedRow;

    private Row(Batch batch, int row) {
      this.batch = batch;
      this.row = row;
    }

    ArrowBuf buffer() {
      return batch.buf;
    }

    long offset() {
      return row * rowBytes;
    }

    @Override
    public void close() {
      synchronized (RowSlots.this) {
        if (closedRow) {
          return;
        }
        closedRow = true;
      }
      done(batch);
    }
  }
}
