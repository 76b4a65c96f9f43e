package dev.spindle.spark.serve;

import dev.spindle.gpu.feed.SlotWriter;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.plan.BatchKey;
import dev.spindle.spark.samples.RowBatch;
import java.util.BitSet;
import java.util.List;
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
 * <p>Threads: made on the source thread ({@link BatchTargets#claim}); its rows written by decode
 * threads ({@link RowBatch}); filled, delivered and {@link #giveUp given up} by the task thread,
 * after every row of the batch left the decode stage. Ownership: the task's {@link BatchTargets}
 * until the task thread gives it up; then its memory goes back (the slot is published or abandoned,
 * the Arrow batch returns to its pool) as soon as no decode thread writes into it ({@link
 * RowBatch}).
 */
abstract class BatchTarget extends RowBatch {
  BatchTarget(ArrowBuf pixels, long rowBytes, int capacity) {
    super(pixels, rowBytes, capacity);
  }

  /** Sets row {@code row}'s label, key, planned index and loss weight (task thread). */
  abstract void setRow(int row, int label, String key, long index, boolean weighted);

  /**
   * Sets row {@code row}'s extra field values ({@code ImageBatch#setFields}), in declaration order
   * (task thread).
   */
  abstract void setFields(int row, List<Object> values);

  /** The first {@code rows} rows, all set, as the batch {@code key} for the consumer. */
  abstract FeedBatch batch(BatchKey key, int rows, int padded, BitSet substituted);

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

    /**
     * Refused: a slot writer writes no extra fields, so a feed that declares some is never given
     * one ({@code FeederConsumer.claimSlot} returns null for its feeder: its batches come as Arrow
     * batches, which carry the fields).
     */
    @Override
    void setFields(int row, List<Object> values) {
      throw new UnsupportedOperationException(
          "A feeder's ring slot carries no extra fields (spark.spindle.fields)");
    }

    @Override
    FeedBatch batch(BatchKey key, int rows, int padded, BitSet substituted) {
      return FeedBatch.written(
          key, writer, java.util.Arrays.copyOf(indices, rows), padded, substituted);
    }

    @Override
    protected void release() {
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
    void setFields(int row, List<Object> values) {
      batch.setFields(row, values);
    }

    @Override
    FeedBatch batch(BatchKey key, int rows, int padded, BitSet substituted) {
      return new FeedBatch(key, batch.seal(rows), padded, substituted);
    }

    @Override
    protected void release() {
      batch.reset();
      back.accept(batch);
    }
  }
}
