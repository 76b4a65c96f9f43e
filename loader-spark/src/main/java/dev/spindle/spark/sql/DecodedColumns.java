package dev.spindle.spark.sql;

import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.SamplePath;
import dev.spindle.spark.samples.ShardSamples;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.spark.sql.types.StructType;

/**
 * Decoded columns: the sample path's {@link ImageBatch} (the Arrow batch {@code preprocess} writes;
 * for a preprocess output, its stored rows) exposed to Spark without copying it. {@code label},
 * {@code key} and {@code index} are its vectors; {@code image} is a {@link VarBinaryVector} over
 * its pixel buffer (Spark reads no fixed-size lists): offsets {@code i x rowBytes} and validity set
 * once per task, data the very buffer the rows are filled into. {@code height}, {@code width} and
 * {@code channels} are constant vectors filled once; {@code shard} is written per batch. Task
 * thread only.
 */
final class DecodedColumns extends ScanColumns {
  private final BatchImages images;
  private final int capacity;
  private final BufferAllocator allocator;
  private final ImageBatch batch;
  private final VarCharVector shards;

  DecodedColumns(
      BatchImages images,
      int capacity,
      List<FieldSpec> extras,
      StructType schema,
      BufferAllocator allocator) {
    this.images = images;
    this.capacity = capacity;
    this.allocator = allocator;
    this.batch =
        own(
            new ImageBatch(
                allocator, images.height(), images.width(), images.channels(), capacity, extras));
    try {
      this.shards = own(new VarCharVector(ScanSchema.SHARD, allocator));
      shards.allocateNew(capacity * 64L, capacity);
      wrap(schema, allocator, capacity);
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  @Override
  void write(List<Decoded<ShardSamples.Located>> rows) {
    batch.reset();
    shards.reset();
    if (!SamplePath.fill(batch, rows).isEmpty()) {
      throw new IllegalStateException("A quarantined sample reached the scan's batch");
    }
    for (int r = 0; r < rows.size(); r++) {
      shards.setSafe(r, utf8(rows.get(r).item().sample().shard()));
    }
    shards.setValueCount(rows.size());
    batch.seal(rows.size());
  }

  @Override
  ValueVector vector(String column) {
    return switch (column) {
      case ScanSchema.IMAGE -> imageView();
      case ScanSchema.HEIGHT -> constant(column, images.height());
      case ScanSchema.WIDTH -> constant(column, images.width());
      case ScanSchema.CHANNELS -> constant(column, images.channels());
      case ScanSchema.LABEL -> batch.root().getVector(BatchSchema.LABEL);
      case ScanSchema.KEY -> batch.root().getVector(BatchSchema.KEY);
      case ScanSchema.SHARD -> shards;
      case ScanSchema.INDEX -> batch.root().getVector(BatchSchema.INDEX);
      default -> extra(column);
    };
  }

  /** An extra field's column: the batch's own vector, as it is (Spark reads Arrow lists). */
  private ValueVector extra(String column) {
    ValueVector v = batch.extraFields() == 0 ? null : batch.root().getVector(column);
    if (v != null) {
      return v;
    }
    throw new IllegalArgumentException(
        "No column '"
            + column
            + "' in the spindle data source's decoded schema "
            + ScanSchema.of(true).simpleString());
  }

  /** A binary vector whose row {@code i} is the batch's pixels {@code [i, i+1) x rowBytes}. */
  private VarBinaryVector imageView() {
    long rowBytes = batch.rowBytes();
    if (rowBytes * capacity > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "Batches of "
              + capacity
              + " images of "
              + rowBytes
              + " bytes exceed the 2 GiB a binary column holds; lower spark.spindle.batchSize");
    }
    VarBinaryVector view = own(new VarBinaryVector(ScanSchema.IMAGE, allocator));
    int validityBytes = BitVectorHelper.getValidityBufferSizeFromCount(capacity);
    try (ArrowBuf offsets = allocator.buffer((capacity + 1) * 4L);
        ArrowBuf validity = allocator.buffer(validityBytes)) {
      for (int i = 0; i <= capacity; i++) {
        offsets.setInt(i * 4L, (int) (i * rowBytes));
      }
      validity.setOne(0, validity.capacity());
      // the view takes its own references to the three buffers
      view.loadFieldBuffers(
          new ArrowFieldNode(capacity, 0), List.of(validity, offsets, batch.imageData()));
    }
    return view;
  }

  private IntVector constant(String column, int value) {
    IntVector v = own(new IntVector(column, allocator));
    v.allocateNew(capacity);
    for (int i = 0; i < capacity; i++) {
      v.set(i, value);
    }
    v.setValueCount(capacity);
    return v;
  }
}
