package dev.spindle.spark.shard;

import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.batch.FieldType;
import java.util.ArrayList;
import java.util.List;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;

/**
 * The Parquet columns of a job's extra fields, resolved against a file's schema, and each row's
 * values read from them. A declared type must fit the column's: {@code int32} an INT32, {@code
 * int64} an INT32 or INT64, {@code float32} a FLOAT, {@code float64} a FLOAT or DOUBLE, {@code
 * string} a BINARY with a STRING (or JSON, ENUM) logical type, {@code bytes} any BINARY, {@code
 * list<T>} a LIST of such elements (or a repeated such column); anything else is refused naming the
 * file, the column and both types. Only these columns are added to the projection. Immutable apart
 * from the readers it is given; one thread.
 *
 * @param fields the extra fields, in declaration order
 * @param leaves each field's leaf column (the element's, for a list)
 * @param columns the top-level types to add to the projection
 */
record ParquetFields(List<FieldSpec> fields, List<ColumnDescriptor> leaves, List<Type> columns) {

  /**
   * The columns of {@code extras} in {@code schema}.
   *
   * @throws ShardRefusedException naming the file, the column and its type when one is missing or
   *     holds another type than its field declares
   */
  static ParquetFields resolve(MessageType schema, List<FieldSpec> extras, String file)
      throws ShardRefusedException {
    List<ColumnDescriptor> leaves = new ArrayList<>();
    List<Type> columns = new ArrayList<>();
    for (FieldSpec f : extras) {
      if (!schema.containsField(f.source())) {
        throw new ShardRefusedException(
            file + " has no column '" + f.source() + "' for field '" + f.name() + "'");
      }
      Type column = schema.getType(f.source());
      String[] leaf = leafPath(column, f, file);
      leaves.add(schema.getColumnDescription(leaf));
      columns.add(column);
    }
    return new ParquetFields(List.copyOf(extras), leaves, columns);
  }

  private static String[] leafPath(Type column, FieldSpec f, String file)
      throws ShardRefusedException {
    if (!f.type().isList()) {
      if (column.isPrimitive()
          && !column.isRepetition(Type.Repetition.REPEATED)
          && fits(column.asPrimitiveType(), f.type())) {
        return new String[] {column.getName()};
      }
      throw mismatch(column, f, file);
    }
    if (column.isPrimitive() && column.isRepetition(Type.Repetition.REPEATED)) {
      if (fits(column.asPrimitiveType(), f.type())) {
        return new String[] {column.getName()};
      }
      throw mismatch(column, f, file);
    }
    if (!column.isPrimitive()
        && column.getLogicalTypeAnnotation()
            instanceof LogicalTypeAnnotation.ListLogicalTypeAnnotation
        && column.asGroupType().getFieldCount() == 1) {
      Type repeated = column.asGroupType().getType(0);
      if (repeated.isPrimitive() && fits(repeated.asPrimitiveType(), f.type())) {
        return new String[] {column.getName(), repeated.getName()};
      }
      if (!repeated.isPrimitive() && ((GroupType) repeated).getFieldCount() == 1) {
        Type element = ((GroupType) repeated).getType(0);
        if (element.isPrimitive() && fits(element.asPrimitiveType(), f.type())) {
          return new String[] {column.getName(), repeated.getName(), element.getName()};
        }
      }
    }
    throw mismatch(column, f, file);
  }

  private static boolean fits(PrimitiveType t, FieldType type) {
    PrimitiveTypeName p = t.getPrimitiveTypeName();
    LogicalTypeAnnotation logical = t.getLogicalTypeAnnotation();
    boolean plainInt =
        logical == null
            || (logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i
                && i.isSigned());
    return switch (type) {
      case INT32, LIST_INT32 -> p == PrimitiveTypeName.INT32 && plainInt;
      case INT64, LIST_INT64 ->
          (p == PrimitiveTypeName.INT32 || p == PrimitiveTypeName.INT64) && plainInt;
      case FLOAT32, LIST_FLOAT32 -> p == PrimitiveTypeName.FLOAT;
      case FLOAT64 -> p == PrimitiveTypeName.FLOAT || p == PrimitiveTypeName.DOUBLE;
      case STRING ->
          p == PrimitiveTypeName.BINARY
              && (logical instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation
                  || logical instanceof LogicalTypeAnnotation.JsonLogicalTypeAnnotation
                  || logical instanceof LogicalTypeAnnotation.EnumLogicalTypeAnnotation);
      case BYTES -> p == PrimitiveTypeName.BINARY || p == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY;
      case IMAGE -> false;
    };
  }

  private static ShardRefusedException mismatch(Type column, FieldSpec f, String file) {
    return new ShardRefusedException(
        file
            + ": column '"
            + column.getName()
            + "' has type '"
            + column.toString().replaceAll("\\s+", " ").trim()
            + "'; field '"
            + f.name()
            + "' declares "
            + f.type()
            + " (spark.spindle.fields)");
  }

  /**
   * Field {@code i}'s value in the current row, read from {@code reader} positioned on it ({@link
   * ParquetRowGroup}): a scalar or string as its type holds it, or null when the row holds null. A
   * list's values are consumed up to the next row's first value ({@link ParquetRowGroup} is told).
   *
   * @throws IllegalArgumentException when a string or list is over {@code maxBytes}
   */
  Object value(int i, ParquetRowGroup group, int column, int maxBytes) {
    FieldSpec f = fields.get(i);
    if (f.type().isList()) {
      return group.list(column, f.type(), maxBytes);
    }
    if (group.isNull(column)) {
      return null;
    }
    ColumnReader r = group.reader(column);
    PrimitiveTypeName p = leaves.get(i).getPrimitiveType().getPrimitiveTypeName();
    return switch (f.type()) {
      case INT32 -> r.getInteger();
      case INT64 -> p == PrimitiveTypeName.INT32 ? (long) r.getInteger() : r.getLong();
      case FLOAT32 -> r.getFloat();
      case FLOAT64 -> p == PrimitiveTypeName.FLOAT ? (double) r.getFloat() : r.getDouble();
      case STRING -> bounded(r.getBinary().toStringUsingUTF8(), r.getBinary().length(), maxBytes);
      case BYTES -> bounded(r.getBinary().getBytes(), r.getBinary().length(), maxBytes);
      default -> throw new IllegalStateException("No scalar value for " + f);
    };
  }

  private static Object bounded(Object value, int bytes, int maxBytes) {
    if (bytes > maxBytes) {
      throw new IllegalArgumentException(
          bytes + " bytes, over spark.spindle.fields.maxBytes=" + maxBytes);
    }
    return value;
  }
}
