package dev.spindle.spark.batch;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A reusable batch of up to {@code capacity} images with their labels, keys and indices, and the
 * values of a job's extra fields ({@link FieldSpec}) when it declares some, laid out in one {@link
 * VectorSchemaRoot}. Image pixels are written straight into the tensor column's data buffer ({@link
 * #imageData()}, row {@code r} at {@code r * rowBytes()}), by any number of threads at once as long
 * as each writes only its own rows; everything else is single-threaded.
 *
 * <p>Rows may be set in any order and set again ({@link #setRow}): the fixed-width columns are
 * written in place, while the keys, a variable-width column whose row {@code r} starts where row
 * {@code r - 1} ends, are kept per row and written in row order by {@link #seal}. (Writing a key at
 * an earlier row after later ones moves the later rows' offsets and loses their keys.) Extra fields
 * ({@link #setFields}) are kept per row the same way and written by {@link #seal}. Every row up to
 * the sealed count must have been set since the last {@link #reset}.
 *
 * <p>A batch of samples without an image ({@link #withoutImages}: a job whose declared fields have
 * no {@code image}) has the same columns but {@code image}, and no pixel buffer.
 *
 * <p>Owns its root and every buffer in it; {@link #close()} releases them. Reuse: {@link #reset()}
 * after the rows were consumed (e.g. written to a file).
 */
public final class ImageBatch implements AutoCloseable {
  private final VectorSchemaRoot root;
  private final FixedSizeListVector images;
  private final UInt1Vector pixels;
  private final IntVector labels;
  private final VarCharVector keys;
  private final BigIntVector indices;
  private final int capacity;
  private final long rowBytes;
  private final byte[][] rowKeys;
  private final FieldColumns fields;
  private final Object[][] rowFields; // each row's extra field values, in declaration order
  private int rows;

  public ImageBatch(BufferAllocator allocator, int height, int width, int channels, int capacity) {
    this(allocator, height, width, channels, capacity, List.of());
  }

  /** Whether the batch has an {@code image} column ({@link #withoutImages} has none). */
  public boolean hasImage() {
    return images != null;
  }

  /**
   * A batch with a column per extra field after {@code index} ({@link BatchSchema#of(int, int, int,
   * List)}), set per row by {@link #setFields}.
   */
  public ImageBatch(
      BufferAllocator allocator,
      int height,
      int width,
      int channels,
      int capacity,
      List<FieldSpec> extras) {
    this(
        allocator,
        BatchSchema.of(height, width, channels, extras),
        (long) height * width * channels,
        capacity,
        extras);
  }

  /**
   * A batch of samples without an image ({@link FieldSet#hasImage()} false): {@code label}, {@code
   * key}, {@code index} and the extra fields ({@link BatchSchema#withoutImage}); it has no image
   * column, no pixel buffer ({@link #imageData()} is null) and {@link #rowBytes()} 0.
   */
  public static ImageBatch withoutImages(
      BufferAllocator allocator, int capacity, List<FieldSpec> extras) {
    return new ImageBatch(allocator, BatchSchema.withoutImage(extras), 0, capacity, extras);
  }

  private ImageBatch(
      BufferAllocator allocator,
      Schema schema,
      long rowBytes,
      int capacity,
      List<FieldSpec> extras) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("Invalid batch size: " + capacity + " (must be > 0)");
    }
    this.capacity = capacity;
    this.rowBytes = rowBytes;
    this.rowKeys = new byte[capacity][];
    this.rowFields = new Object[capacity][];
    this.root = VectorSchemaRoot.create(schema, allocator);
    try {
      FixedShapeTensorVector tensor = (FixedShapeTensorVector) root.getVector(BatchSchema.IMAGE);
      this.images = tensor == null ? null : tensor.getUnderlyingVector();
      this.labels = (IntVector) root.getVector(BatchSchema.LABEL);
      this.keys = (VarCharVector) root.getVector(BatchSchema.KEY);
      this.indices = (BigIntVector) root.getVector(BatchSchema.INDEX);
      if (images != null) {
        images.setInitialCapacity(capacity);
        images.allocateNew();
        this.pixels = (UInt1Vector) images.getDataVector();
        markAllValid();
      } else {
        this.pixels = null;
      }
      labels.allocateNew(capacity);
      keys.allocateNew(capacity * 32L, capacity);
      indices.allocateNew(capacity);
      this.fields = new FieldColumns(root, extras, capacity);
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  private void markAllValid() {
    // Rows are never null: set every validity bit once; reuse keeps them set.
    ArrowBuf listValidity = images.getValidityBuffer();
    listValidity.setOne(0, listValidity.capacity());
    ArrowBuf pixelValidity = pixels.getValidityBuffer();
    pixelValidity.setOne(0, pixelValidity.capacity());
  }

  public int capacity() {
    return capacity;
  }

  public long rowBytes() {
    return rowBytes;
  }

  /** Rows filled so far. */
  public int rows() {
    return rows;
  }

  /**
   * The pixel buffer; row {@code r} starts at byte {@code r * rowBytes()}. Null for a batch {@link
   * #withoutImages}.
   */
  public ArrowBuf imageData() {
    return pixels == null ? null : pixels.getDataBuffer();
  }

  /**
   * Sets the non-image columns of row {@code row}, in any order of rows; a row set again takes the
   * new values (single-threaded).
   */
  public void setRow(int row, int label, String key, long index) {
    Objects.checkIndex(row, capacity);
    labels.set(row, label);
    rowKeys[row] = key.getBytes(StandardCharsets.UTF_8);
    indices.set(row, index);
  }

  /**
   * Sets the extra fields of row {@code row} (single-threaded): one value per extra field, in
   * declaration order, each as its {@link FieldType} holds it ({@code Integer}, {@code Long},
   * {@code Float}, {@code Double}, {@code String}, {@code byte[]}, {@code int[]}, {@code long[]},
   * {@code float[]}). A row given none (a stand-in) gets empty values. The batch keeps the list
   * until it is sealed.
   */
  public void setFields(int row, List<Object> values) {
    Objects.checkIndex(row, capacity);
    if (values.size() != fields.size()) {
      throw new IllegalArgumentException(
          "Row " + row + " has " + values.size() + " field values; the batch has " + fields.size());
    }
    rowFields[row] = values.toArray();
  }

  /** The number of extra field columns. */
  public int extraFields() {
    return fields.size();
  }

  /** Sets the label of row {@code row}, which was set before (single-threaded). */
  public void setLabel(int row, int label) {
    if (rowKeys[Objects.checkIndex(row, capacity)] == null) {
      throw new IllegalStateException("Row " + row + " of the batch was not set");
    }
    labels.set(row, label);
  }

  /**
   * Moves the pixels of row {@code from} to row {@code to} (to < from); used to close the gaps left
   * by quarantined samples. Rows never overlap, so the copy is safe.
   */
  public void movePixels(int from, int to) {
    if (from == to || images == null) {
      return;
    }
    ArrowBuf data = imageData();
    data.setBytes(to * rowBytes, data, from * rowBytes, rowBytes);
  }

  /** Declares the first {@code count} rows complete and returns the root to write or read. */
  public VectorSchemaRoot seal(int count) {
    if (count < 0 || count > capacity) {
      throw new IllegalArgumentException(
          "Invalid row count: " + count + " (capacity " + capacity + ")");
    }
    keys.reset();
    for (int r = 0; r < count; r++) {
      if (rowKeys[r] == null) {
        throw new IllegalStateException(
            "Row " + r + " of the batch was not set (sealing " + count + " rows)");
      }
      keys.setSafe(r, rowKeys[r]); // in row order: see the class documentation
    }
    fields.write(rowFields, count);
    rows = count;
    if (images != null) {
      pixels.setValueCount((int) (count * rowBytes));
      images.setValueCount(count);
    }
    labels.setValueCount(count);
    keys.setValueCount(count);
    indices.setValueCount(count);
    root.setRowCount(count);
    return root;
  }

  /** Makes the batch empty for the next fill; buffers are kept. */
  public void reset() {
    rows = 0;
    Arrays.fill(rowKeys, null);
    Arrays.fill(rowFields, null);
    keys.reset();
    fields.reset();
    root.setRowCount(0);
  }

  /** The root, for readers of a sealed batch. Owned by this batch. */
  public VectorSchemaRoot root() {
    return root;
  }

  @Override
  public void close() {
    root.close();
  }
}
