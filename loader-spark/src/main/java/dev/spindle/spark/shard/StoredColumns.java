package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.ExtensionTypeVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The columns of a loaded record batch of a {@code preprocess} Arrow part file: {@code image} (a
 * fixed-size list of uint8, the {@code arrow.fixed_shape_tensor} extension or its plain storage,
 * whether or not the extension type is registered in this JVM), {@code label} int32, {@code key}
 * utf8, {@code index} int64, and the columns of the job's extra fields when it declares some (a
 * preprocess output's extra columns, by name: {@code caption=caption}). Views into the reader's
 * vectors, valid until its next batch; one thread.
 */
final class StoredColumns {
  private final FixedSizeListVector images;
  private final UInt1Vector pixels;
  private final IntVector labels;
  private final VarCharVector keys;
  private final BigIntVector indices;
  private final List<FieldSpec> extras;
  private final FieldVector[] fields; // the extra fields' columns, by their sources' names

  StoredColumns(VectorSchemaRoot root, List<FieldSpec> extras) {
    this.extras = List.copyOf(extras);
    this.fields = extras.stream().map(f -> root.getVector(f.source())).toArray(FieldVector[]::new);
    FieldVector image = root.getVector("image");
    this.images = image == null ? null : list(image); // none in an output without images
    this.pixels = images == null ? null : (UInt1Vector) images.getDataVector();
    this.labels = (IntVector) root.getVector("label");
    this.keys = (VarCharVector) root.getVector("key");
    this.indices = (BigIntVector) root.getVector("index");
  }

  /**
   * Checks that {@code root} has the columns {@code preprocess} writes, with their types: {@code
   * image} only when {@code image} (the job's samples have one).
   */
  static void check(VectorSchemaRoot root, String uri, List<FieldSpec> extras, boolean image)
      throws IOException {
    for (FieldSpec f : extras) {
      FieldVector v = root.getVector(f.source());
      Field want = f.type().arrowField(f.source());
      boolean same =
          v != null
              && v.getField().getType().equals(want.getType())
              && (want.getChildren().isEmpty()
                  || want.getChildren()
                      .get(0)
                      .getType()
                      .equals(v.getField().getChildren().get(0).getType()));
      require(same, uri, f.source(), f.type() + " (field '" + f.name() + "')", v);
    }
    if (image) {
      checkImage(root, uri);
    }
    checkRows(root, uri);
  }

  private static void checkImage(VectorSchemaRoot root, String uri) throws IOException {
    FieldVector image = root.getVector("image");
    FixedSizeListVector list = image == null ? null : list(image);
    require(
        list != null && list.getDataVector() instanceof UInt1Vector,
        uri,
        "image",
        "a fixed-size list of uint8 (arrow.fixed_shape_tensor)",
        image);
  }

  private static void checkRows(VectorSchemaRoot root, String uri) throws IOException {
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
    int rowBytes = images == null ? 0 : images.getListSize();
    String key = keys.isNull(r) ? null : new String(keys.get(r), StandardCharsets.UTF_8);
    return StoredRows.sample(
        shard,
        fileName,
        row,
        key,
        images == null || images.isNull(r) ? -1 : rowBytes, // no column: ignored (StoredRows)
        () -> {
          byte[] out = new byte[rowBytes];
          pixels.getDataBuffer().getBytes((long) r * rowBytes, out);
          return out;
        },
        labels.isNull(r) ? null : labels.get(r),
        indices.isNull(r) ? null : indices.get(r),
        limits,
        b -> {
          for (int i = 0; i < fields.length; i++) {
            Object v = fields[i].isNull(r) ? null : value(fields[i], r);
            if (v == null) {
              b.problem(
                  "the value of field '" + extras.get(i).name() + "' is null (row " + row + ")");
            } else {
              b.fieldValue(i, v);
            }
          }
        });
  }

  /** Row {@code r} of an extra field's column, as its {@code FieldType} holds it. */
  private static Object value(FieldVector v, int r) {
    if (v instanceof ListVector list) {
      int start = list.getElementStartIndex(r);
      int n = list.getElementEndIndex(r) - start;
      FieldVector data = list.getDataVector();
      if (data instanceof IntVector ints) {
        int[] a = new int[n];
        Arrays.setAll(a, j -> ints.get(start + j));
        return a;
      }
      if (data instanceof BigIntVector longs) {
        long[] a = new long[n];
        Arrays.setAll(a, j -> longs.get(start + j));
        return a;
      }
      float[] a = new float[n];
      Float4Vector floats = (Float4Vector) data;
      for (int j = 0; j < n; j++) {
        a[j] = floats.get(start + j);
      }
      return a;
    }
    if (v instanceof VarCharVector s) {
      return new String(s.get(r), StandardCharsets.UTF_8);
    }
    return v instanceof VarBinaryVector b ? b.get(r) : v.getObject(r);
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
