package dev.spindle.spark.sql;

import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.batch.FieldType;
import java.util.List;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The columns of the {@code spindle} data source. Decoded ({@code decode=true}, the default):
 * {@code image} (binary: uint8 RGB, H x W x C, row-major), {@code height}, {@code width}, {@code
 * channels}, {@code label}, {@code key} (the sample's key in its shard), {@code shard} (the shard's
 * URI), {@code index} (the sample's dataset index, as in {@code preprocess}'s Arrow output).
 * Encoded ({@code decode=false}): {@code image} (the image's bytes as stored), {@code format} (a
 * file's extension: jpg, jpeg, png; a Parquet value's format by its magic number: jpeg, png, or "";
 * see {@link EncodedColumns#format}), then {@code label}, {@code key}, {@code shard}, {@code
 * index}. Either has one more column per extra field ({@code spark.spindle.fields}, the option
 * {@code fields}) after {@code index}. Samples without an image (declared fields without {@code
 * image}) have neither: {@code label}, {@code key}, {@code shard}, {@code index} and the extra
 * fields. A mixture (option {@code mix}) has one more column, last: {@code source}, the name of the
 * row's source. No column is nullable. Stateless.
 */
final class ScanSchema {
  static final String IMAGE = "image";
  static final String HEIGHT = "height";
  static final String WIDTH = "width";
  static final String CHANNELS = "channels";
  static final String FORMAT = "format";
  static final String LABEL = "label";
  static final String KEY = "key";
  static final String SHARD = "shard";
  static final String INDEX = "index";

  /** A mixture's column (option {@code mix}): the name of the source each row comes from. */
  static final String SOURCE = "source";

  private ScanSchema() {}

  static StructType of(boolean decode) {
    return of(decode, List.of());
  }

  /**
   * The columns with one per extra field after {@code index}, in declaration order: int32 an int,
   * int64 a long, float32 a float, float64 a double, string a string, bytes binary, {@code list<T>}
   * an array of T.
   */
  static StructType of(boolean decode, List<FieldSpec> extras) {
    return of(decode, true, extras);
  }

  /**
   * {@link #of(boolean, List)}, or for samples without an image ({@code images} false: the declared
   * fields have no {@code image}) the columns without {@code image}, {@code height}, {@code width},
   * {@code channels} and {@code format}: {@code label} (-100 without a declared label), {@code
   * key}, {@code shard}, {@code index}, then the extra fields, whatever {@code decode} says.
   */
  static StructType of(boolean decode, boolean images, List<FieldSpec> extras) {
    StructType schema = images ? base(decode) : rowColumns(new StructType());
    for (FieldSpec f : extras) {
      schema = schema.add(f.name(), type(f.type()), false);
    }
    return schema;
  }

  /**
   * {@link #of(boolean, boolean, List)}, and for a mixture ({@code mixed}: option {@code mix}) one
   * more column, last: {@code source}, the name of the mixture's source each row comes from.
   *
   * @throws IllegalArgumentException when a mixture's declared field is named {@code source}
   */
  static StructType of(boolean decode, boolean images, List<FieldSpec> extras, boolean mixed) {
    StructType schema = of(decode, images, extras);
    if (!mixed) {
      return schema;
    }
    if (extras.stream().anyMatch(f -> f.name().equals(SOURCE))) {
      throw new IllegalArgumentException(
          "The field 'source' (spark.spindle.fields, option fields) takes the name of the column"
              + " a mixture's rows name their source in (option mix): rename the field");
    }
    return schema.add(SOURCE, DataTypes.StringType, false);
  }

  /** The columns of a scan with {@code settings}. */
  static StructType of(ScanSettings settings) {
    return of(
        settings.decode(), settings.images(), settings.sample().extras(), settings.mix() != null);
  }

  private static DataType type(FieldType type) {
    return switch (type) {
      case INT32 -> DataTypes.IntegerType;
      case INT64 -> DataTypes.LongType;
      case FLOAT32 -> DataTypes.FloatType;
      case FLOAT64 -> DataTypes.DoubleType;
      case STRING -> DataTypes.StringType;
      case BYTES -> DataTypes.BinaryType;
      case LIST_INT32 -> DataTypes.createArrayType(DataTypes.IntegerType, false);
      case LIST_INT64 -> DataTypes.createArrayType(DataTypes.LongType, false);
      case LIST_FLOAT32 -> DataTypes.createArrayType(DataTypes.FloatType, false);
      case IMAGE -> throw new IllegalStateException("The image is not an extra column");
    };
  }

  private static StructType base(boolean decode) {
    StructType head = new StructType().add(IMAGE, DataTypes.BinaryType, false);
    head =
        decode
            ? head.add(HEIGHT, DataTypes.IntegerType, false)
                .add(WIDTH, DataTypes.IntegerType, false)
                .add(CHANNELS, DataTypes.IntegerType, false)
            : head.add(FORMAT, DataTypes.StringType, false);
    return rowColumns(head);
  }

  /** {@code label}, {@code key}, {@code shard}, {@code index} after {@code head}. */
  private static StructType rowColumns(StructType head) {
    return head.add(LABEL, DataTypes.IntegerType, false)
        .add(KEY, DataTypes.StringType, false)
        .add(SHARD, DataTypes.StringType, false)
        .add(INDEX, DataTypes.LongType, false);
  }
}
