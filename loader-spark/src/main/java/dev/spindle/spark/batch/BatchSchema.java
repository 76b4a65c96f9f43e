package dev.spindle.spark.batch;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The Arrow schema of Spindle's image batches (DESIGN.md): {@code image} as {@code
 * arrow.fixed_shape_tensor} uint8 H×W×C, {@code label} int32, {@code key} utf8 (the sample's key
 * inside its shard), {@code index} int64 (the sample's position in the dataset or epoch plan), then
 * one column per extra field ({@link FieldSpec}) in declaration order. Samples without an image
 * have every column but {@code image} ({@link #withoutImage}).
 */
public final class BatchSchema {
  public static final String IMAGE = "image";
  public static final String LABEL = "label";
  public static final String KEY = "key";
  public static final String INDEX = "index";

  /**
   * The label of a row a trainer must ignore (padding, a stand-in of a quarantined sample):
   * PyTorch's ignore label, {@code cross_entropy}'s default {@code ignore_index}, so that a per-row
   * loss over such rows is 0 instead of an error. Such rows also get loss weight 0.
   */
  public static final int IGNORED_LABEL = -100;

  private BatchSchema() {}

  /** The schema for images of the given size, HWC layout. */
  public static Schema of(int height, int width, int channels) {
    return of(height, width, channels, List.of());
  }

  /**
   * The schema for images of the given size, HWC layout, with a column per extra field after {@code
   * index}, in declaration order ({@link FieldType#arrowField}).
   */
  public static Schema of(int height, int width, int channels, List<FieldSpec> extras) {
    FixedShapeTensorType image =
        new FixedShapeTensorType(new int[] {height, width, channels}, List.of("H", "W", "C"));
    List<Field> fields = new ArrayList<>();
    fields.add(image.field(IMAGE));
    return rest(fields, extras);
  }

  /**
   * The schema of samples without an image ({@link FieldSet#hasImage()} false): {@code label},
   * {@code key}, {@code index}, then a column per extra field in declaration order. No image column
   * at all, not even a placeholder.
   */
  public static Schema withoutImage(List<FieldSpec> extras) {
    return rest(new ArrayList<>(), extras);
  }

  private static Schema rest(List<Field> fields, List<FieldSpec> extras) {
    fields.add(new Field(LABEL, FieldType.notNullable(new ArrowType.Int(32, true)), null));
    fields.add(new Field(KEY, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null));
    fields.add(new Field(INDEX, FieldType.notNullable(new ArrowType.Int(64, true)), null));
    for (FieldSpec extra : extras) {
      fields.add(extra.type().arrowField(extra.name()));
    }
    return new Schema(fields);
  }
}
