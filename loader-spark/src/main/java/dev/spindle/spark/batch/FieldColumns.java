package dev.spindle.spark.batch;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The vectors of a job's extra fields, one per field, written in row order from each row's values
 * ({@link ImageBatch#setFields}): in an {@link ImageBatch} they live in the batch's root after
 * {@code image}, {@code label}, {@code key}, {@code index}, and the batch owns them; {@link
 * #standalone} ones (the data source's encoded columns) own a root of their own, released by {@link
 * #close()}. A row given no values (a stand-in for a quarantined sample) gets 0, an empty string,
 * empty bytes or an empty list. Task thread only.
 */
public final class FieldColumns implements AutoCloseable {
  private static final Object[] NONE = new Object[0];

  private final List<FieldSpec> fields;
  private final FieldVector[] vectors;
  private final VectorSchemaRoot owned; // null when the vectors are an ImageBatch's

  /** Columns for {@code fields} in a root of their own, allocated from {@code allocator}. */
  public static FieldColumns standalone(
      BufferAllocator allocator, List<FieldSpec> fields, int capacity) {
    List<Field> arrow = fields.stream().map(f -> f.type().arrowField(f.name())).toList();
    VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(arrow), allocator);
    try {
      return new FieldColumns(root, fields, capacity, root);
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  FieldColumns(VectorSchemaRoot root, List<FieldSpec> fields, int capacity) {
    this(root, fields, capacity, null);
  }

  private FieldColumns(
      VectorSchemaRoot root, List<FieldSpec> fields, int capacity, VectorSchemaRoot owned) {
    this.owned = owned;
    this.fields = List.copyOf(fields);
    this.vectors = new FieldVector[fields.size()];
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = root.getVector(fields.get(i).name());
      vectors[i].setInitialCapacity(capacity);
      vectors[i].allocateNew();
    }
  }

  public int size() {
    return vectors.length;
  }

  /** The vector of the field named {@code name}, or null when there is none. */
  public FieldVector vector(String name) {
    for (int i = 0; i < vectors.length; i++) {
      if (fields.get(i).name().equals(name)) {
        return vectors[i];
      }
    }
    return null;
  }

  /**
   * Writes rows {@code 0..count-1} from {@code values[r]}, one value per field in declaration order
   * (null: a stand-in's empty values), and sets each vector's value count.
   */
  public void write(Object[][] values, int count) {
    for (int i = 0; i < vectors.length; i++) {
      FieldVector v = vectors[i];
      v.reset();
      for (int r = 0; r < count; r++) {
        Object[] row = values[r] == null ? NONE : values[r];
        set(fields.get(i).type(), v, r, row.length == 0 ? null : row[i]);
      }
      v.setValueCount(count);
    }
  }

  void reset() {
    for (FieldVector v : vectors) {
      v.reset();
    }
  }

  /** Releases a standalone root; nothing for an {@link ImageBatch}'s columns. Idempotent. */
  @Override
  public void close() {
    if (owned != null) {
      owned.close();
    }
  }

  private static void set(FieldType type, FieldVector v, int r, Object value) {
    switch (type) {
      case INT32 -> ((IntVector) v).setSafe(r, value == null ? 0 : (Integer) value);
      case INT64 -> ((BigIntVector) v).setSafe(r, value == null ? 0 : (Long) value);
      case FLOAT32 -> ((Float4Vector) v).setSafe(r, value == null ? 0 : (Float) value);
      case FLOAT64 -> ((Float8Vector) v).setSafe(r, value == null ? 0 : (Double) value);
      case STRING ->
          ((VarCharVector) v)
              .setSafe(
                  r,
                  value == null ? new byte[0] : ((String) value).getBytes(StandardCharsets.UTF_8));
      case BYTES -> ((VarBinaryVector) v).setSafe(r, value == null ? new byte[0] : (byte[]) value);
      case LIST_INT32, LIST_INT64, LIST_FLOAT32 -> list(type, (ListVector) v, r, value);
      case IMAGE -> throw new IllegalStateException("The image is not an extra field");
    }
  }

  private static void list(FieldType type, ListVector list, int r, Object value) {
    int start = list.startNewValue(r);
    BaseFixedWidthVector data = (BaseFixedWidthVector) list.getDataVector();
    int n = 0;
    if (value instanceof int[] a) {
      for (int j = 0; j < a.length; j++) {
        ((IntVector) data).setSafe(start + j, a[j]);
      }
      n = a.length;
    } else if (value instanceof long[] a) {
      for (int j = 0; j < a.length; j++) {
        ((BigIntVector) data).setSafe(start + j, a[j]);
      }
      n = a.length;
    } else if (value instanceof float[] a) {
      for (int j = 0; j < a.length; j++) {
        ((Float4Vector) data).setSafe(start + j, a[j]);
      }
      n = a.length;
    } else if (value != null) {
      throw new IllegalArgumentException(
          "A " + type + " value must be a Java array of its element type, not " + value.getClass());
    }
    list.endValue(r, n);
    data.setValueCount(start + n);
  }
}
