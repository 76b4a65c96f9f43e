package dev.spindle.spark.shard;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.IntLogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;

/**
 * Where a Parquet file keeps a sample's parts, resolved from its schema by {@link ParquetColumns}:
 * the image is a BINARY (or FIXED_LEN_BYTE_ARRAY) column without a logical type, or a struct's such
 * field {@code bytes}; the label an INT32 or INT64 column, plain or with an integer logical type
 * (int8 … int64, uint8 … uint64). Neither may be repeated. Counting and reading resolve with this
 * one class, so a file that counts is a file that reads. Immutable; any thread.
 *
 * @param image the leaf column of the image bytes, or null when the job reads no image
 * @param label the leaf column of the label, or null when the job reads no label
 * @param labelUnsigned true when the label's integer type is unsigned
 * @param schema the projection: the file's schema reduced to these columns
 */
record ParquetLayout(
    ColumnDescriptor image, ColumnDescriptor label, boolean labelUnsigned, MessageType schema) {

  /**
   * The layout of a file's schema, or a refusal naming the file, the column and what is wrong. A
   * part the job does not read ({@link ParquetColumns}: null) has a null column here.
   */
  static ParquetLayout resolve(MessageType schema, ParquetColumns columns, String file)
      throws ShardRefusedException {
    String[] imagePath = columns.image() == null ? null : imagePath(schema, columns.image(), file);
    PrimitiveType label = columns.label() == null ? null : labelType(schema, columns.label(), file);
    List<Type> read = new ArrayList<>();
    if (imagePath != null) {
      read.add(schema.getType(columns.image()));
    }
    if (label != null) {
      read.add(schema.getType(columns.label()));
    }
    MessageType projection = new MessageType(schema.getName(), read);
    return new ParquetLayout(
        imagePath == null ? null : projection.getColumnDescription(imagePath),
        label == null ? null : projection.getColumnDescription(new String[] {columns.label()}),
        label != null
            && label.getLogicalTypeAnnotation() instanceof IntLogicalTypeAnnotation i
            && !i.isSigned(),
        projection);
  }

  /** The columns read, image first then label, those of them there are. */
  List<ColumnDescriptor> read() {
    List<ColumnDescriptor> read = new ArrayList<>();
    if (image != null) {
      read.add(image);
    }
    if (label != null) {
      read.add(label);
    }
    return read;
  }

  /**
   * The label column's current value as stored: an INT32 widened (unsigned when its type is), an
   * INT64 as is (for uint64, its bits: see {@link #labelNumber} and {@link #labelText}).
   */
  long labelRaw(org.apache.parquet.column.ColumnReader reader) {
    if (label.getPrimitiveType().getPrimitiveTypeName() == PrimitiveTypeName.INT32) {
      int v = reader.getInteger();
      return labelUnsigned ? Integer.toUnsignedLong(v) : v;
    }
    return reader.getLong();
  }

  /** The label's value for {@link LabelRule}: a uint64 over 2^63 becomes the largest long. */
  long labelNumber(long raw) {
    return labelUnsigned && raw < 0 ? Long.MAX_VALUE : raw;
  }

  /** The label's value as text, for messages. */
  String labelText(long raw) {
    return labelUnsigned ? Long.toUnsignedString(raw) : Long.toString(raw);
  }

  private static String[] imagePath(MessageType schema, String name, String file)
      throws ShardRefusedException {
    Type column = column(schema, name, file, "image", "imageColumn", "--image-column");
    if (column.isPrimitive()) {
      requireBytes(column.asPrimitiveType(), "column '" + name + "'", file);
      return new String[] {name};
    }
    GroupType struct = column.asGroupType();
    if (struct.isRepetition(Type.Repetition.REPEATED)
        || !struct.containsField("bytes")
        || !struct.getType("bytes").isPrimitive()) {
      throw new ShardRefusedException(
          file
              + ": column '"
              + name
              + "' has type '"
              + describe(struct)
              + "'; the image column must be BINARY, or a struct {bytes: BINARY, …} as Hugging Face"
              + " writes it (not repeated)");
    }
    requireBytes(struct.getType("bytes").asPrimitiveType(), "field '" + name + ".bytes'", file);
    return new String[] {name, "bytes"};
  }

  private static void requireBytes(PrimitiveType type, String what, String file)
      throws ShardRefusedException {
    PrimitiveTypeName physical = type.getPrimitiveTypeName();
    boolean bytes =
        physical == PrimitiveTypeName.BINARY || physical == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY;
    if (!bytes
        || type.getLogicalTypeAnnotation() != null
        || type.isRepetition(Type.Repetition.REPEATED)) {
      throw new ShardRefusedException(
          file
              + ": "
              + what
              + " has type '"
              + describe(type)
              + "'; encoded"
              + " images must be BINARY bytes (no logical type such as STRING, not repeated)");
    }
  }

  private static PrimitiveType labelType(MessageType schema, String name, String file)
      throws ShardRefusedException {
    Type column = column(schema, name, file, "label", "labelColumn", "--label-column");
    LogicalTypeAnnotation logical = column.getLogicalTypeAnnotation();
    boolean integer =
        column.isPrimitive()
            && !column.isRepetition(Type.Repetition.REPEATED)
            && (column.asPrimitiveType().getPrimitiveTypeName() == PrimitiveTypeName.INT32
                || column.asPrimitiveType().getPrimitiveTypeName() == PrimitiveTypeName.INT64)
            && (logical == null || logical instanceof IntLogicalTypeAnnotation);
    if (!integer) {
      throw new ShardRefusedException(
          file
              + ": column '"
              + name
              + "' has type '"
              + describe(column)
              + "'; labels must be integers (INT32 or INT64, signed or unsigned, not repeated)");
    }
    return column.asPrimitiveType();
  }

  private static Type column(
      MessageType schema, String name, String file, String part, String key, String flag)
      throws ShardRefusedException {
    if (!schema.containsField(name)) {
      throw new ShardRefusedException(
          file
              + " has no column '"
              + name
              + "' for the "
              + part
              + " (its columns: "
              + names(schema.getFields())
              + "); set spark.spindle.parquet."
              + key
              + " ("
              + flag
              + ") to the column that holds it");
    }
    return schema.getType(name);
  }

  /** A type on one line: "optional group image { optional binary bytes; }". */
  private static String describe(Type type) {
    return type.toString().replaceAll("\\s+", " ").trim();
  }

  private static String names(List<Type> fields) {
    return fields.stream().map(Type::getName).collect(Collectors.joining(", "));
  }
}
