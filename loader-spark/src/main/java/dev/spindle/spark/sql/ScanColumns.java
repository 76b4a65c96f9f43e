package dev.spindle.spark.sql;

import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.ShardSamples;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The reader's end of the sample path: turns each batch of rows into Spark's {@link ColumnarBatch},
 * whose columns are {@code ArrowColumnVector}s ({@link ReusedArrowColumnVector}) over Arrow vectors
 * this object owns (no row is converted to an {@code InternalRow}). One {@code ColumnarBatch} and
 * one set of vectors, allocated once per task from the task's allocator and refilled by every
 * {@link #fill}: a batch is valid until the next {@code fill} or {@link #close()}. Task thread
 * only.
 */
abstract class ScanColumns implements AutoCloseable {
  private final List<AutoCloseable> owned = new ArrayList<>();
  private final Map<String, byte[]> utf8 = new HashMap<>();
  private ColumnarBatch columnar;
  private boolean closed;
  private VarCharVector sources; // the mixture's source column, or null
  private LongFunction<String> sourceOf;

  /** The columns of {@code schema} (a subset of {@link ScanSchema}, in any order). */
  static ScanColumns create(ScanSettings settings, StructType schema, BufferAllocator allocator) {
    return settings.decodes()
        ? new DecodedColumns(
            settings.sample().images(),
            settings.batchSize(),
            settings.sample().extras(),
            schema,
            allocator)
        : new EncodedColumns(settings.batchSize(), settings.sample().extras(), schema, allocator);
  }

  /** Fills the vectors with {@code rows} (good samples only) and returns them as one batch. */
  final ColumnarBatch fill(List<Decoded<ShardSamples.Located>> rows) {
    write(rows);
    if (sources != null) {
      sources.reset();
      for (int r = 0; r < rows.size(); r++) {
        sources.setSafe(r, utf8(sourceOf.apply(rows.get(r).item().index())));
      }
      sources.setValueCount(rows.size());
    }
    columnar.setNumRows(rows.size());
    return columnar;
  }

  /** Writes rows {@code 0..rows.size()-1} of every vector. */
  abstract void write(List<Decoded<ShardSamples.Located>> rows);

  /** The vector holding {@code column}, made (and {@link #own}ed) on first use. */
  abstract ValueVector vector(String column);

  /**
   * Wraps the vectors of {@code schema}'s columns, in its order; called once by constructors. A
   * mixture's {@code source} column is this class's own, written from the names {@link
   * #nameSources} gives.
   */
  final void wrap(StructType schema, BufferAllocator allocator, int capacity) {
    StructField[] fields = schema.fields();
    ColumnVector[] columns = new ColumnVector[fields.length];
    for (int i = 0; i < fields.length; i++) {
      String name = fields[i].name();
      columns[i] =
          new ReusedArrowColumnVector(
              name.equals(ScanSchema.SOURCE) ? sources(allocator, capacity) : vector(name));
    }
    columnar = new ColumnarBatch(columns, 0);
  }

  private VarCharVector sources(BufferAllocator allocator, int capacity) {
    sources = own(new VarCharVector(ScanSchema.SOURCE, allocator));
    sources.allocateNew(capacity * 16L, capacity);
    return sources;
  }

  /**
   * How the {@code source} column names a row's source, from its index (a mixture's catalog index);
   * set before the first {@link #fill} when the schema has that column.
   */
  final void nameSources(LongFunction<String> names) {
    this.sourceOf = names;
  }

  /** Takes ownership of {@code v} (a vector, a batch): closed by {@link #close()}. */
  final <V extends AutoCloseable> V own(V v) {
    owned.add(v);
    return v;
  }

  /** {@code s} as UTF-8, cached: shard names repeat on every row. */
  final byte[] utf8(String s) {
    return utf8.computeIfAbsent(s, k -> k.getBytes(StandardCharsets.UTF_8));
  }

  /** Releases every vector, in reverse order; idempotent. */
  @Override
  public final void close() {
    if (closed) {
      return;
    }
    closed = true;
    RuntimeException failure = null;
    for (int i = owned.size() - 1; i >= 0; i--) {
      try {
        owned.get(i).close();
      } catch (Exception e) {
        failure =
            failure == null ? new IllegalStateException("Closing the scan's vectors", e) : failure;
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
