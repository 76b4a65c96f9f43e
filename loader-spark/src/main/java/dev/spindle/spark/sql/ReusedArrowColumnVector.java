package dev.spindle.spark.sql;

import org.apache.arrow.vector.ValueVector;
import org.apache.spark.sql.vectorized.ArrowColumnVector;

/**
 * An {@link ArrowColumnVector} over a vector the reader refills for every batch. Spark frees a
 * batch's columns once it has read them ({@code ColumnarToRowExec} calls {@link
 * #closeIfFreeable()}, which for a plain {@code ArrowColumnVector} closes the Arrow vector), as it
 * does not for its own reused {@code WritableColumnVector}s; this column is reused, so that call
 * does nothing. The reader that owns the vector closes it. Task thread only.
 */
final class ReusedArrowColumnVector extends ArrowColumnVector {
  ReusedArrowColumnVector(ValueVector vector) {
    super(vector);
  }

  @Override
  public void closeIfFreeable() {
    // the vector is refilled by the next batch and closed by its owner, the partition reader
  }
}
