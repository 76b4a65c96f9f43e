package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldType;
import java.util.Arrays;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * The elements of one Parquet list value as they are read, kept as the primitive array its {@link
 * FieldType} holds ({@code int[]}, {@code long[]}, {@code float[]}). One thread.
 */
final class ListValues {
  private final FieldType type;
  private final PrimitiveTypeName stored;
  private int[] ints = new int[0];
  private long[] longs = new long[0];
  private float[] floats = new float[0];
  private int size;

  ListValues(FieldType type, PrimitiveTypeName stored) {
    this.type = type;
    this.stored = stored;
  }

  int size() {
    return size;
  }

  /** Appends the reader's current value. */
  void add(ColumnReader r) {
    switch (type) {
      case LIST_INT32 -> {
        ints = grow(ints);
        ints[size] = r.getInteger();
      }
      case LIST_INT64 -> {
        longs = grow(longs);
        longs[size] = stored == PrimitiveTypeName.INT32 ? r.getInteger() : r.getLong();
      }
      default -> {
        floats = grow(floats);
        floats[size] = r.getFloat();
      }
    }
    size++;
  }

  /** The elements read, as an array of exactly {@link #size()}. */
  Object array() {
    return switch (type) {
      case LIST_INT32 -> Arrays.copyOf(ints, size);
      case LIST_INT64 -> Arrays.copyOf(longs, size);
      default -> Arrays.copyOf(floats, size);
    };
  }

  private int[] grow(int[] a) {
    return size < a.length ? a : Arrays.copyOf(a, Math.max(8, a.length * 2));
  }

  private long[] grow(long[] a) {
    return size < a.length ? a : Arrays.copyOf(a, Math.max(8, a.length * 2));
  }

  private float[] grow(float[] a) {
    return size < a.length ? a : Arrays.copyOf(a, Math.max(8, a.length * 2));
  }
}
