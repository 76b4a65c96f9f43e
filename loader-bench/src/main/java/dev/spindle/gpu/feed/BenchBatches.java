package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.NormalizeSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/** Synthetic Arrow batches in the feeder's schema, for the benchmark. */
final class BenchBatches {
  private BenchBatches() {}

  /** A batch of {@code rows} random images; the caller owns and closes it. */
  static VectorSchemaRoot build(BufferAllocator alloc, int rows, NormalizeSpec spec, Random rnd) {
    int bytes = spec.inputBytesPerImage();
    FixedSizeListVector image = FixedSizeListVector.empty("image", bytes, alloc);
    image.addOrGetVector(FieldType.notNullable(new ArrowType.Int(8, false)));
    IntVector label = new IntVector("label", alloc);
    VarCharVector key = new VarCharVector("key", alloc);
    BigIntVector index = new BigIntVector("index", alloc);
    VectorSchemaRoot root =
        new VectorSchemaRoot(
            List.<Field>of(image.getField(), label.getField(), key.getField(), index.getField()),
            List.of(image, label, key, index));
    image.setInitialCapacity(rows);
    image.allocateNew();
    UInt1Vector data = (UInt1Vector) image.getDataVector();
    byte[] pixels = new byte[bytes];
    label.allocateNew(rows);
    key.allocateNew(rows);
    index.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      rnd.nextBytes(pixels);
      image.setNotNull(i);
      for (int b = 0; b < bytes; b++) {
        data.setSafe(i * bytes + b, pixels[b]);
      }
      label.set(i, rnd.nextInt(1000));
      key.setSafe(i, ("sample-" + i).getBytes(StandardCharsets.UTF_8));
      index.set(i, i);
    }
    data.setValueCount(rows * bytes);
    root.setRowCount(rows);
    return root;
  }
}
