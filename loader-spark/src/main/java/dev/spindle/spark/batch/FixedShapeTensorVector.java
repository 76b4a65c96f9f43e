package dev.spindle.spark.batch;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.util.hash.ArrowBufHasher;
import org.apache.arrow.vector.ExtensionTypeVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;

/** The vector of a {@link FixedShapeTensorType} column; its storage is the fixed-size list. */
public final class FixedShapeTensorVector extends ExtensionTypeVector<FixedSizeListVector> {
  private final FixedShapeTensorType type;

  FixedShapeTensorVector(
      String name,
      BufferAllocator allocator,
      FixedSizeListVector storage,
      FixedShapeTensorType type) {
    super(name, allocator, storage);
    this.type = type;
  }

  public FixedShapeTensorType tensorType() {
    return type;
  }

  @Override
  public Object getObject(int index) {
    return getUnderlyingVector().getObject(index);
  }

  @Override
  public int hashCode(int index) {
    return getUnderlyingVector().hashCode(index);
  }

  @Override
  public int hashCode(int index, ArrowBufHasher hasher) {
    return getUnderlyingVector().hashCode(index, hasher);
  }

  @Override
  public org.apache.arrow.vector.types.pojo.Field getField() {
    return type.field(getName());
  }
}
