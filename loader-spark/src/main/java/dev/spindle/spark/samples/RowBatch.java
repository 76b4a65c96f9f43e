package dev.spindle.spark.samples;

import org.apache.arrow.memory.ArrowBuf;

/**
 * A batch that its rows' pixels are decoded straight into: row {@code r} is {@link #rowBytes()}
 * bytes at {@code r * rowBytes()} of {@link #pixels()}, and its {@link RowTarget} ({@link #row})
 * goes with the row's item through the sample path, so no sample gets a buffer of its own and
 * nothing copies it into a batch afterwards. Subclasses say where the memory comes from and where
 * it goes back ({@link #release}): a feeder's ring slot or a pooled Arrow batch ({@code
 * serve.BatchTarget}), a benchmark's pooled buffer.
 *
 * <p>Threads: each row written by one decode thread between {@link RowTarget#begin} and {@link
 * RowTarget#end}; {@link #giveUp given up} by the thread that consumes the batch once every row of
 * it left the decode stage. Ownership: the maker's until it is given up; then its memory goes back
 * ({@link #release}, once) as soon as no decode thread writes into it: a batch given up while a row
 * is still being written (a failing task whose pipeline did not stop in time) goes back when that
 * write ends, and a row begun after that writes nothing ({@link RowTarget#begin} returns null).
 */
public abstract class RowBatch {
  private final ArrowBuf pixels;
  private final long rowBytes;
  private final RowTarget[] rows;
  private int writers;
  private boolean givenUp;
  private boolean released;

  /**
   * Rows {@code 0..capacity-1} of {@code rowBytes} each in {@code pixels}, which it does not own.
   */
  protected RowBatch(ArrowBuf pixels, long rowBytes, int capacity) {
    this.pixels = pixels;
    this.rowBytes = rowBytes;
    this.rows = new RowTarget[capacity];
    for (int r = 0; r < capacity; r++) {
      rows[r] = new Row(r * rowBytes);
    }
  }

  /** Row {@code r}'s target, for the decode stage. */
  public RowTarget row(int r) {
    return rows[r];
  }

  /**
   * The batch's pixels, row {@code r} at {@code r * rowBytes()}; read once its rows are written.
   */
  public ArrowBuf pixels() {
    return pixels;
  }

  public long rowBytes() {
    return rowBytes;
  }

  /** Gives the memory back; called once, with no row being written, on the thread that ends it. */
  protected abstract void release();

  /** The consumer is done with the batch: see the class documentation. Idempotent. */
  public final synchronized void giveUp() {
    givenUp = true;
    releaseIfIdle();
  }

  private synchronized ArrowBuf begin(Row row) {
    if (givenUp) {
      return null;
    }
    row.writing = true;
    writers++;
    return pixels;
  }

  private synchronized void end(Row row) {
    if (!row.writing) {
      return; // begun after the give-up: it wrote nothing, and must not end another row's write
    }
    row.writing = false;
    writers--;
    releaseIfIdle();
  }

  private void releaseIfIdle() {
    if (givenUp && writers == 0 && !released) {
      released = true;
      release();
    }
  }

  private final class Row implements RowTarget {
    private final long offset;
    private boolean writing; // guarded by the batch

    Row(long offset) {
      this.offset = offset;
    }

    @Override
    public ArrowBuf begin() {
      return RowBatch.this.begin(this);
    }

    @Override
    public long offset() {
      return offset;
    }

    @Override
    public void end() {
      RowBatch.this.end(this);
    }
  }
}
