package dev.spindle.spark.sql;

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
 * index}. No column is nullable. Stateless.
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

  private ScanSchema() {}

  static StructType of(boolean decode) {
    StructType head = new StructType().add(IMAGE, DataTypes.BinaryType, false);
    head =
        decode
            ? head.add(HEIGHT, DataTypes.IntegerType, false)
                .add(WIDTH, DataTypes.IntegerType, false)
                .add(CHANNELS, DataTypes.IntegerType, false)
            : head.add(FORMAT, DataTypes.StringType, false);
    return head.add(LABEL, DataTypes.IntegerType, false)
        .add(KEY, DataTypes.StringType, false)
        .add(SHARD, DataTypes.StringType, false)
        .add(INDEX, DataTypes.LongType, false);
  }
}
