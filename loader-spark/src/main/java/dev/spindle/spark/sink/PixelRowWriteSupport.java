package dev.spindle.spark.sink;

import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.batch.FixedShapeTensorVector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;

/**
 * Turns row {@code r} of the bound Arrow batch into one Parquet record of the schema
 *
 * <pre>
 * message spindle {
 *   required binary image;          // H·W·C uint8 pixels, RGB, row-major HWC
 *   required int32 label;
 *   required binary key (STRING);
 *   required int64 index;
 * }
 * </pre>
 *
 * then one column per extra field after {@code index} ({@link FieldParquetColumns}), with the image
 * shape in the file's key-value metadata ({@value #SHAPE_KEY} = {@code [H,W,C]}). Samples without
 * an image (no shape) have every column but {@code image}, and no shape metadata. Pixels are handed
 * to parquet-mr as a reused buffer: it copies what it keeps, since the batch is refilled after each
 * write. One thread (the sink's).
 */
final class PixelRowWriteSupport extends WriteSupport<Integer> {
  static final String IMAGE = BatchSchema.IMAGE;

  /** Key-value metadata key holding the image shape as a JSON array {@code [H,W,C]}. */
  static final String SHAPE_KEY = "spindle.image_shape";

  static final MessageType SCHEMA =
      Types.buildMessage()
          .required(PrimitiveTypeName.BINARY)
          .named(IMAGE)
          .required(PrimitiveTypeName.INT32)
          .named(BatchSchema.LABEL)
          .required(PrimitiveTypeName.BINARY)
          .as(LogicalTypeAnnotation.stringType())
          .named(BatchSchema.KEY)
          .required(PrimitiveTypeName.INT64)
          .named(BatchSchema.INDEX)
          .named("spindle");

  private final int[] shape; // null: no image column
  private final int rowBytes;
  private final MessageType schema;
  private final int baseColumns; // the columns before the extra fields
  private List<FieldVector> extras = List.of();
  private RecordConsumer out;
  private ArrowBuf pixels;
  private IntVector labels;
  private VarCharVector keys;
  private BigIntVector indices;

  PixelRowWriteSupport(int[] shape) {
    this(shape, List.of());
  }

  /**
   * Rows of a batch whose Arrow schema has {@code extras} after {@code index}; {@code shape} null
   * for a batch without an image column.
   */
  PixelRowWriteSupport(int[] shape, List<Field> extras) {
    this.shape = shape == null ? null : shape.clone();
    this.rowBytes =
        shape == null ? 0 : Math.multiplyExact(Math.multiplyExact(shape[0], shape[1]), shape[2]);
    List<Type> columns = new ArrayList<>(SCHEMA.getFields());
    if (shape == null) {
      columns.remove(0); // the image
    }
    this.baseColumns = columns.size();
    extras.forEach(f -> columns.add(FieldParquetColumns.type(f)));
    this.schema =
        shape != null && extras.isEmpty() ? SCHEMA : new MessageType(SCHEMA.getName(), columns);
  }

  @Override
  public WriteContext init(Configuration configuration) {
    if (shape == null) {
      return new WriteContext(schema, Map.of());
    }
    String json = "[" + shape[0] + "," + shape[1] + "," + shape[2] + "]";
    return new WriteContext(schema, Map.of(SHAPE_KEY, json));
  }

  @Override
  public void prepareForWrite(RecordConsumer recordConsumer) {
    this.out = recordConsumer;
  }

  /** The batch whose rows the next writes read, or null after them. */
  void bind(VectorSchemaRoot root) {
    if (root == null) {
      pixels = null;
      labels = null;
      keys = null;
      indices = null;
      extras = List.of();
      return;
    }
    extras = FieldParquetColumns.extras(root, baseColumns);
    if (shape != null) {
      FixedShapeTensorVector tensor = (FixedShapeTensorVector) root.getVector(BatchSchema.IMAGE);
      pixels = tensor.getUnderlyingVector().getDataVector().getDataBuffer();
    }
    labels = (IntVector) root.getVector(BatchSchema.LABEL);
    keys = (VarCharVector) root.getVector(BatchSchema.KEY);
    indices = (BigIntVector) root.getVector(BatchSchema.INDEX);
  }

  @Override
  public void write(Integer row) {
    int r = row;
    out.startMessage();
    int c = 0;
    if (shape != null) {
      out.startField(IMAGE, c);
      out.addBinary(Binary.fromReusedByteBuffer(pixels.nioBuffer((long) r * rowBytes, rowBytes)));
      out.endField(IMAGE, c++);
    }
    out.startField(BatchSchema.LABEL, c);
    out.addInteger(labels.get(r));
    out.endField(BatchSchema.LABEL, c++);
    out.startField(BatchSchema.KEY, c);
    out.addBinary(Binary.fromConstantByteArray(keys.get(r)));
    out.endField(BatchSchema.KEY, c++);
    out.startField(BatchSchema.INDEX, c);
    out.addLong(indices.get(r));
    out.endField(BatchSchema.INDEX, c);
    for (int i = 0; i < extras.size(); i++) {
      FieldParquetColumns.write(out, extras.get(i), baseColumns + i, r);
    }
    out.endMessage();
  }
}
