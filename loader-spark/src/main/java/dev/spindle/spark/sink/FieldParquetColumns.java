package dev.spindle.spark.sink;

import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;

/**
 * The Parquet columns of a batch's extra fields (the Arrow columns after {@code index}): int32 and
 * int64 as INT32/INT64, float32/float64 as FLOAT/DOUBLE, a string as BINARY (STRING), bytes as
 * BINARY, a {@code List<T>} as Parquet's standard three-level LIST ({@code required group NAME
 * (LIST) { repeated group list { required T element; } }}), which pyarrow, DuckDB and Spark read as
 * a list column. Every column is required, as every batch column is non-null. One thread (the
 * sink's).
 */
final class FieldParquetColumns {
  private FieldParquetColumns() {}

  /** The Parquet type of the Arrow column {@code field}. */
  static Type type(Field field) {
    ArrowType t = field.getType();
    if (t instanceof ArrowType.List) {
      Type element =
          primitive(field.getChildren().get(0).getType(), Type.Repetition.REQUIRED, "element");
      return Types.requiredGroup()
          .as(LogicalTypeAnnotation.listType())
          .addField(Types.repeatedGroup().addField(element).named("list"))
          .named(field.getName());
    }
    return primitive(t, Type.Repetition.REQUIRED, field.getName());
  }

  private static Type primitive(ArrowType t, Type.Repetition repetition, String name) {
    if (t instanceof ArrowType.Int i) {
      return Types.primitive(
              i.getBitWidth() == 32 ? PrimitiveTypeName.INT32 : PrimitiveTypeName.INT64, repetition)
          .named(name);
    }
    if (t instanceof ArrowType.FloatingPoint f) {
      return Types.primitive(
              f.getPrecision() == org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE
                  ? PrimitiveTypeName.FLOAT
                  : PrimitiveTypeName.DOUBLE,
              repetition)
          .named(name);
    }
    if (t instanceof ArrowType.Utf8) {
      return Types.primitive(PrimitiveTypeName.BINARY, repetition)
          .as(LogicalTypeAnnotation.stringType())
          .named(name);
    }
    if (t instanceof ArrowType.Binary) {
      return Types.primitive(PrimitiveTypeName.BINARY, repetition).named(name);
    }
    throw new IllegalArgumentException("No Parquet column for the Arrow type " + t + " of " + name);
  }

  /** The extra columns of {@code root}: every column after the first {@code base}. */
  static List<FieldVector> extras(VectorSchemaRoot root, int base) {
    List<FieldVector> all = root.getFieldVectors();
    return all.subList(base, all.size());
  }

  /** Writes row {@code r} of {@code v} as field {@code index} of the record being written. */
  static void write(RecordConsumer out, FieldVector v, int index, int r) {
    String name = v.getName();
    out.startField(name, index);
    if (v instanceof ListVector list) {
      writeList(out, list, r);
    } else {
      value(out, v, r);
    }
    out.endField(name, index);
  }

  private static void writeList(RecordConsumer out, ListVector list, int r) {
    int start = list.getElementStartIndex(r);
    int end = list.getElementEndIndex(r);
    out.startGroup();
    if (end > start) {
      out.startField("list", 0);
      FieldVector data = list.getDataVector();
      for (int j = start; j < end; j++) {
        out.startGroup();
        out.startField("element", 0);
        value(out, data, j);
        out.endField("element", 0);
        out.endGroup();
      }
      out.endField("list", 0);
    }
    out.endGroup();
  }

  private static void value(RecordConsumer out, FieldVector v, int r) {
    if (v instanceof IntVector i) {
      out.addInteger(i.get(r));
    } else if (v instanceof BigIntVector l) {
      out.addLong(l.get(r));
    } else if (v instanceof Float4Vector f) {
      out.addFloat(f.get(r));
    } else if (v instanceof Float8Vector d) {
      out.addDouble(d.get(r));
    } else if (v instanceof VarCharVector s) {
      out.addBinary(Binary.fromConstantByteArray(s.get(r)));
    } else if (v instanceof VarBinaryVector b) {
      out.addBinary(Binary.fromConstantByteArray(b.get(r)));
    } else {
      throw new IllegalArgumentException("No Parquet value for the vector " + v.getName());
    }
  }
}
