package dev.spindle.spark.batch;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The type of one declared field ({@link FieldSpec}), as {@code spark.spindle.fields} spells it,
 * with the Arrow type of its column in a batch. {@link #IMAGE} is today's decoded image column; the
 * others are scalars (fixed width), {@code string}/{@code bytes} (variable width) or lists of
 * numbers ({@code List<T>}, variable length). Immutable.
 */
public enum FieldType {
  IMAGE("image", null, 0),
  INT32("int32", new ArrowType.Int(32, true), 4),
  INT64("int64", new ArrowType.Int(64, true), 8),
  FLOAT32("float32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE), 4),
  FLOAT64("float64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE), 8),
  STRING("string", ArrowType.Utf8.INSTANCE, 0),
  BYTES("bytes", ArrowType.Binary.INSTANCE, 0),
  LIST_INT32("list<int32>", new ArrowType.Int(32, true), 4),
  LIST_INT64("list<int64>", new ArrowType.Int(64, true), 8),
  LIST_FLOAT32("list<float32>", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE), 4);

  private final String text;
  private final ArrowType arrow; // the element's type for a list
  private final int width; // bytes of one value (one element for a list); 0 = variable

  FieldType(String text, ArrowType arrow, int width) {
    this.text = text;
    this.arrow = arrow;
    this.width = width;
  }

  /** The name as written in {@code spark.spindle.fields} ({@code list<int32>}). */
  public String text() {
    return text;
  }

  /** True for {@code list<...>} types. */
  public boolean isList() {
    return name().startsWith("LIST_");
  }

  /** True for scalars: one fixed-width number per row. */
  public boolean isScalar() {
    return this == INT32 || this == INT64 || this == FLOAT32 || this == FLOAT64;
  }

  /** Bytes of one scalar value or one list element; 0 for image, string and bytes. */
  public int width() {
    return width;
  }

  /**
   * The Arrow field of a column of this type named {@code name} (not nullable, as every batch
   * column): Int/FloatingPoint, Utf8, Binary, or List of the element type.
   *
   * @throws IllegalStateException for {@link #IMAGE}, whose column {@link BatchSchema} makes
   */
  public Field arrowField(String name) {
    if (this == IMAGE) {
      throw new IllegalStateException("The image column's field comes from BatchSchema");
    }
    if (!isList()) {
      return new Field(name, org.apache.arrow.vector.types.pojo.FieldType.notNullable(arrow), null);
    }
    Field element =
        new Field("item", org.apache.arrow.vector.types.pojo.FieldType.notNullable(arrow), null);
    return new Field(
        name,
        org.apache.arrow.vector.types.pojo.FieldType.notNullable(ArrowType.List.INSTANCE),
        List.of(element));
  }

  /**
   * The type spelled {@code text} (case-insensitive, blanks ignored).
   *
   * @throws IllegalArgumentException naming the text and every valid type
   */
  public static FieldType parse(String text) {
    String t = text.replace(" ", "").toLowerCase(Locale.ROOT);
    for (FieldType type : values()) {
      if (type.text.equals(t)) {
        return type;
      }
    }
    throw new IllegalArgumentException(
        "unknown type '" + text + "' (valid types: " + names() + ")");
  }

  /** Every type's name, comma-separated, for messages. */
  public static String names() {
    return Arrays.stream(values()).map(FieldType::text).collect(Collectors.joining(", "));
  }

  @Override
  public String toString() {
    return text;
  }
}
