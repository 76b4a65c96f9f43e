package dev.spindle.spark.sink;

import dev.spindle.spark.batch.BatchSchema;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The first and last {@code index} a part file stores, taken from the batches as they are written:
 * what the manifest records so that readers check each row's index ({@code shard.PartChecks}). One
 * thread, the sink's.
 */
final class StoredIndexRange {
  private long first = -1;
  private long last = -1;

  /** Takes in the root's current rows, about to be written. */
  void add(VectorSchemaRoot root) {
    int rows = root.getRowCount();
    if (rows == 0) {
      return;
    }
    BigIntVector index = (BigIntVector) root.getVector(BatchSchema.INDEX);
    if (first < 0) {
      first = index.get(0);
    }
    last = index.get(rows - 1);
  }

  /** The first row's index, or -1 before any row. */
  long first() {
    return first;
  }

  /** The last row's index, or -1 before any row. */
  long last() {
    return last;
  }
}
