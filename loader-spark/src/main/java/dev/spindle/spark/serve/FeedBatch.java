package dev.spindle.spark.serve;

import dev.spindle.gpu.feed.SlotWriter;
import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.plan.BatchKey;
import java.util.BitSet;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One planned batch as a consumer receives it: always {@code batchSize} rows in plan order, with
 * the Spindle Arrow schema ({@code image}, {@code label}, {@code key}, {@code index}). The {@code
 * index} column holds the planned dataset index of every row, so a batch is identified by {@link
 * #key()} and its content by its indices, whatever task or attempt produced it.
 *
 * <p>Two kinds of rows carry no sample of their own and should get zero loss weight; both carry the
 * ignored label {@link dev.spindle.spark.batch.BatchSchema#IGNORED_LABEL} (-100, PyTorch's {@code
 * ignore_index}). The last {@link #padded()} rows repeat the rank's own first samples (padding:
 * their image, key and index). Rows in {@link #substituted()} stand in for a quarantined sample:
 * they keep its key and planned {@code index}, as the job's quarantine list names it, and carry the
 * image of the batch's first good row (zeros when the whole batch is bad). Every other row is its
 * sample's image, label, key and index.
 *
 * <p>Two forms: an Arrow batch ({@link #root()}), or, when the consumer gave the task a ring slot
 * to decode into ({@link BatchConsumer#claimSlot}), that slot with every row written and set
 * ({@link #slot()}: the consumer publishes it; {@link #root()} is null) and the rows' planned
 * indices.
 *
 * <p>Owned by the task that produced it: valid only during {@link BatchConsumer#accept}; a consumer
 * that keeps data must copy it. Read by the task thread only.
 */
public final class FeedBatch {
  private final BatchKey key;
  private final VectorSchemaRoot root;
  private final int padded;
  private final BitSet substituted;
  private final SlotWriter slot;
  private final long[] slotIndices;

  public FeedBatch(BatchKey key, VectorSchemaRoot root, int padded, BitSet substituted) {
    this(key, root, null, null, padded, substituted);
  }

  private FeedBatch(
      BatchKey key,
      VectorSchemaRoot root,
      SlotWriter slot,
      long[] slotIndices,
      int padded,
      BitSet substituted) {
    this.key = key;
    this.root = root;
    this.slot = slot;
    this.slotIndices = slotIndices;
    this.padded = padded;
    this.substituted = substituted;
  }

  /**
   * A batch written into {@code slot}, rows {@code 0..indices.length-1} set there, with these
   * planned indices.
   */
  static FeedBatch written(
      BatchKey key, SlotWriter slot, long[] indices, int padded, BitSet substituted) {
    return new FeedBatch(key, null, slot, indices, padded, substituted);
  }

  /** The batch's identity: (epoch, leg, rank, batch), the same on every attempt. */
  public BatchKey key() {
    return key;
  }

  /** The rows; owned by the producing task. Null for a batch written into a ring slot. */
  public VectorSchemaRoot root() {
    return root;
  }

  /**
   * The ring slot the batch was written into, to {@link SlotWriter#publish} with {@link #rows()}
   * rows, or null for an Arrow batch.
   */
  public SlotWriter slot() {
    return slot;
  }

  public int rows() {
    return slot != null ? slotIndices.length : root.getRowCount();
  }

  /** Padded rows; they are the last ones. */
  public int padded() {
    return padded;
  }

  /** Rows standing in for quarantined samples; a copy. */
  public BitSet substituted() {
    return (BitSet) substituted.clone();
  }

  /** The planned dataset index of a row. */
  public long index(int row) {
    if (slot != null) {
      return slotIndices[java.util.Objects.checkIndex(row, slotIndices.length)];
    }
    return ((BigIntVector) root.getVector(BatchSchema.INDEX)).get(row);
  }

  /** The {@code index} column, a new array. */
  public long[] indices() {
    long[] out = new long[rows()];
    for (int r = 0; r < out.length; r++) {
      out[r] = index(r);
    }
    return out;
  }
}
