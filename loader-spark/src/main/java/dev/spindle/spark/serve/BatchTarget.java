package dev.spindle.spark.serve;

import dev.spindle.gpu.feed.SlotWriter;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.plan.BatchKey;
import dev.spindle.spark.samples.RowTarget;
import java.util.BitSet;
import java.util.function.Consumer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.ReferenceManager;

/**
 * Where one planned batch is assembled: its rows' pixels are decoded straight into it (no
 * per-sample buffer, no copy into a batch, no copy into the ring), then the task thread sets each
 * row's label, key, index and weight and hands it over. Two kinds: a ring slot of the rank's feeder
 * ({@link SlotWriter}: on the host devices the memory trainers map; on CUDA the pinned slot the
 * copy engine reads), or a pooled Arrow batch for a consumer in this JVM (the verifier).
 *
 * <p>Threads: made on the source thread ({@link BatchTargets#claim}); each row written by one
 * decode thread between {@link RowTarget#begin} and {@link RowTarget#end}; filled, delivered and
 * {@link #giveUp given up} by the task thread, after every row of the batch left the decode stage.
 * Ownership: the task's {@link BatchTargets} until the task thread gives it up; then its memory
 * goes back (the slot is published or abandoned, the Arrow batch returns to its pool) as soon as no
 * decode thread writes into it: a batch given up while a row is still being written (a failing task
 * whose pipeline did not stop in time) goes back when that write ends.
 */
abstract class BatchTarget {
  private final ArrowBuf pixels;
  private final long rowBytes;
  private final RowTarget[] rows;
  private int writers;
  private boolean givenUp;
  private boolean released;

  BatchTarget(ArrowBuf pixels, long rowBytes, int capacity) {
    this.pixels = pixels;
    this.rowBytes = rowBytes;
    this.rows = new RowTarget[capacity];
    for (int r = 0; r < capacity; r++) {
      rows[r] = new Row(r * rowBytes);
    }
  }

  /** Row {@code r}'s target, for the decode stage. */
  RowTarget row(int r) {
    return rows[r];
  }

  /** The batch's pixels, row {@code r} at {@code r * rowBytes()}; task thread, rows all written. */
  ArrowBuf pixels() {
    return pixels;
  }

  long rowBytes() {
    return rowBytes;
  }

  /** Sets row {@code row}'s label, key, planned index and loss weight (task thread). */
  abstract void setRow(int row, int label, String key, long index, boolean weighted);

  /** The first {@code rows} rows, all set, as the batch {@code key} for the consumer. */
  abstract FeedBatch batch(BatchKey key, int rows, int padded, BitSet substituted);

  /** Gives the memory back (publishes nothing: an unpublished slot is abandoned); once. */
  abstract void release();

  /** The task thread is done with the batch (delivered, or not): see the class documentation. */
  synchronized void giveUp() {
    givenUp = true;
    releaseIfIdle();
  }

  private synchronized ArrowBuf begin() {
    if (givenUp) {
      return null;
    }
    writers++;
    return pixels;
  }

  private synchronized void end() {
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

    Row(long offset) {
      this.offset = offset;
    }

    @Override
    public ArrowBuf begin() {
      return BatchTarget.this.begin();
    }

    @Override
    public long offset() {
      return offset;
    }

    @Override
    public void end() {
      BatchTarget.this.end();
    }
  }

  /** A claimed ring slot of the rank's feeder; the consumer publishes it ({@link FeedBatch}). */
  static final class Slot extends BatchTarget {
    private final SlotWriter writer;
    private final long[] indices;

    Slot(SlotWriter writer) {
      super(view(writer), writer.rowBytes(), writer.capacity());
      this.writer = writer;
      this.indices = new long[writer.capacity()];
    }

    /** The slot's images as an Arrow buffer that owns nothing (the feeder owns the memory). */
    private static ArrowBuf view(SlotWriter w) {
      return new ArrowBuf(
          ReferenceManager.NO_OP, null, w.capacity() * w.rowBytes(), w.rowAddress(0));
    }

    @Override
    void setRow(int row, int label, String key, long index, boolean weighted) {
      writer.setRow(row, label, key, index, weighted);
      indices[row] = index;
    }

    @Override
    FeedBatch batch(BatchKey key, int rows, int padded, BitSet substituted) {
      return FeedBatch.written(
          key, writer, java.util.Arrays.copyOf(indices, rows), padded, substituted);
    }

    @Override
    void release() {
      writer.close(); // after publish: nothing; otherwise the slot is abandoned
    }
  }

  /** A pooled Arrow batch for a consumer in this JVM; back to the pool when given up. */
  static final class Arrow extends BatchTarget {
    private final ImageBatch batch;
    private final Consumer<ImageBatch> back;

    Arrow(ImageBatch batch, Consumer<ImageBatch> back) {
      super(batch.imageData(), batch.rowBytes(), batch.capacity());
      this.batch = batch;
      this.back = back;
    }

    @Override
    void setRow(int row, int label, String key, long index, boolean weighted) {
      batch.setRow(row, label, key, index); // weights travel as FeedBatch's padding and stand-ins
    }

    @Override
    FeedBatch batch(BatchKey key, int rows, int padded, BitSet substituted) {
      return new FeedBatch(key, batch.seal(rows), padded, substituted);
    }

    @Override
    void release() {
      batch.reset();
      back.accept(batch);
    }
  }
}
