package dev.spindle.spark.shard;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.ExtensionTypeVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;

/**
 * The columns of a loaded record batch of a {@code preprocess} Arrow part file: {@code image} (a
 * fixed-size list of uint8, the {@code arrow.fixed_shape_tensor} extension or its plain storage,
 * whether or not the extension type is registered in this JVM), {@code label} int32, {@code key}
 * utf8, {@code index} int64. Views into the reader's vectors, valid until its next batch; one
 * thread.
 */
final class StoredColumns {
  private final FixedSizeListVector images;
  private final UInt1Vector pixels;
  private final IntVector labels;
  private final VarCharVector keys;
  private final BigIntVector indices;

  StoredColumns(VectorSchemaRoot root) {
    this.images = list(root.getVector("image"));
    this.pixels = (UInt1Vector) images.getDataVector();
    this.labels = (IntVector) root.getVector("label");
    this.keys = (VarCharVector) root.getVector("key");
    this.indices = (BigIntVector) root.getVector("index");
  }

  /** Checks that {@code root} has the columns {@code preprocess} writes, with their types. */
  static void check(VectorSchemaRoot root, String uri) throws IOException {
    FieldVector image = root.getVector("image");
    FixedSizeListVector list = image == null ? null : list(image);
    require(
        list != null && list.getDataVector() instanceof UInt1Vector,
        uri,
        "image",
        "a fixed-size list of uint8 (arrow.fixed_shape_tensor)",
        image);
    require(
        root.getVector("label") instanceof IntVector,
        uri,
        "label",
        "int32",
        root.getVector("label"));
    require(
        root.getVector("key") instanceof VarCharVector, uri, "key", "utf8", root.getVector("key"));
    require(
        root.getVector("index") instanceof BigIntVector,
        uri,
        "index",
        "int64",
        root.getVector("index"));
  }

  /** Row {@code r} of the batch, row {@code row} of the file, as a sample. */
  Sample sample(Shard shard, String fileName, long row, int r, SampleLimits limits) {
    int rowBytes = images.getListSize();
    String key = keys.isNull(r) ? null : new String(keys.get(r), StandardCharsets.UTF_8);
    return StoredRows.sample(
        shard,
        fileName,
        row,
        key,
        images.isNull(r) ? -1 : rowBytes,
        () -> {
          byte[] out = new byte[rowBytes];
          pixels.getDataBuffer().getBytes((long) r * rowBytes, out);
          return out;
        },
        labels.isNull(r) ? null : labels.get(r),
        indices.isNull(r) ? null : indices.get(r),
        limits);
  }

  private static FixedSizeListVector list(FieldVector v) {
    FieldVector storage = v instanceof ExtensionTypeVector<?> e ? e.getUnderlyingVector() : v;
    return storage instanceof FixedSizeListVector l ? l : null;
  }

  private static void require(boolean ok, String uri, String column, String type, FieldVector v)
      throws IOException {
    if (!ok) {
      throw StoredFiles.mismatch(
          uri,
          "its column '"
              + column
              + "' is "
              + (v == null ? "missing" : v.getField().getType().toString())
              + ", not "
              + type
              + " as preprocess writes it");
    }
  }
}
