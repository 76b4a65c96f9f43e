package dev.spindle.spark.sql;

import dev.spindle.spark.batch.FieldColumns;
import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.image.ImageFormat;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.ShardSamples;
import dev.spindle.spark.shard.Sample;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.spark.sql.types.StructType;

/**
 * Encoded columns ({@code decode=false}): {@code image} holds each image's bytes as read from its
 * shard, {@code format} what they are ({@link #format}), then {@code label}, {@code key}, {@code
 * shard}, {@code index}, and a column per extra field. Vectors are allocated once per task and grow
 * as needed; each batch overwrites them. Samples without an image (the declared fields have none)
 * leave {@code image} and {@code format} unset: their schema has neither. Task thread only.
 */
final class EncodedColumns extends ScanColumns {
  /** The {@code format} of a preprocess output's stored pixels: uint8 H×W×C, row-major. */
  static final String RAW = "raw";

  private final VarBinaryVector image;
  private final VarCharVector format;
  private final IntVector label;
  private final VarCharVector key;
  private final VarCharVector shard;
  private final BigIntVector index;
  private final FieldColumns fields;
  private final Object[][] values;

  EncodedColumns(
      int capacity, List<FieldSpec> extras, StructType schema, BufferAllocator allocator) {
    try {
      this.fields = own(FieldColumns.standalone(allocator, extras, capacity));
      this.values = new Object[capacity][];
      this.image = own(new VarBinaryVector(ScanSchema.IMAGE, allocator));
      this.format = own(new VarCharVector(ScanSchema.FORMAT, allocator));
      this.label = own(new IntVector(ScanSchema.LABEL, allocator));
      this.key = own(new VarCharVector(ScanSchema.KEY, allocator));
      this.shard = own(new VarCharVector(ScanSchema.SHARD, allocator));
      this.index = own(new BigIntVector(ScanSchema.INDEX, allocator));
      image.allocateNew(capacity * 16_384L, capacity);
      format.allocateNew(capacity * 4L, capacity);
      label.allocateNew(capacity);
      key.allocateNew(capacity * 32L, capacity);
      shard.allocateNew(capacity * 64L, capacity);
      index.allocateNew(capacity);
      wrap(schema, allocator, capacity);
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  @Override
  void write(List<Decoded<ShardSamples.Located>> rows) {
    for (VarCharVector v : List.of(format, key, shard)) {
      v.reset();
    }
    image.reset();
    for (int r = 0; r < rows.size(); r++) {
      Sample s = rows.get(r).item().sample();
      if (s.image() != null) { // none: a sample without an image, whose schema has no image column
        image.setSafe(r, s.image());
        format.setSafe(r, utf8(format(s)));
      }
      label.set(r, s.label());
      key.setSafe(r, s.key().getBytes(StandardCharsets.UTF_8));
      shard.setSafe(r, utf8(s.shard()));
      index.set(r, rows.get(r).item().index());
      values[r] = s.fields().toArray();
    }
    fields.write(values, rows.size());
    for (ValueVector v : List.of(image, format, label, key, shard, index)) {
      v.setValueCount(rows.size());
    }
  }

  @Override
  ValueVector vector(String column) {
    return switch (column) {
      case ScanSchema.IMAGE -> image;
      case ScanSchema.FORMAT -> format;
      case ScanSchema.LABEL -> label;
      case ScanSchema.KEY -> key;
      case ScanSchema.SHARD -> shard;
      case ScanSchema.INDEX -> index;
      default -> extra(column);
    };
  }

  private ValueVector extra(String column) {
    ValueVector v = fields.vector(column);
    if (v != null) {
      return v;
    }
    throw new IllegalArgumentException(
        "No column '"
            + column
            + "' in the spindle data source's encoded schema "
            + ScanSchema.of(false).simpleString());
  }

  /**
   * A sample's {@code format}. An image that was a file (a tar entry, an image folder's file): its
   * extension, lower case ({@code jpg}, {@code png}, {@code webp}, ...), as WebDataset names a
   * sample's parts. An image that was a value (a Parquet row's): what its bytes' magic number says,
   * as the decoder takes it ({@code jpeg}, {@code png}, {@code webp}, {@code bmp}, {@code pnm},
   * {@code tiff}, {@code gif}: {@code ImageFormat}), or "" when they are none (no column is null;
   * such bytes would be quarantined when decoding). A preprocess output's stored pixels: {@code
   * raw} (uint8 H×W×C, the output's {@code image_shape}).
   */
  static String format(Sample s) {
    if (s.stored() != null) {
      return RAW;
    }
    if (s.imageFile() != null) {
      return extension(s.imageFile());
    }
    ImageFormat sniffed = ImageFormat.sniff(s.image(), 0, s.image().length);
    return sniffed == null ? "" : sniffed.name().toLowerCase(Locale.ROOT);
  }

  /** A file name's extension, lower case ({@code jpg}, {@code png}), or "" when none. */
  static String extension(String name) {
    int dot = name == null ? -1 : name.lastIndexOf('.');
    return dot < 0 || dot < name.lastIndexOf('/')
        ? ""
        : name.substring(dot + 1).toLowerCase(Locale.ROOT);
  }
}
