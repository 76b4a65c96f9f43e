package dev.spindle.gpu.feed;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One extra field of a feeder's batches (a column after {@code image}, {@code label}, {@code key},
 * {@code index}), as the feeder lays it out in each ring slot and the bridge describes it in BATCH
 * ({@code PROTOCOL.md}, "Fields"): its name, the element type of its values, and whether each row
 * has one value ({@link Kind#FIXED}: the batch's values are one contiguous array) or a
 * variable-length run ({@link Kind#LIST}, {@link Kind#STRING}: values, then {@code rows + 1} int32
 * offsets counted in elements). A variable field reserves {@code maxBytes} bytes of values per row
 * in every slot; a longer value is refused when the batch is offered.
 *
 * <p>Immutable value; any thread.
 *
 * @param name the column's name (not one of the four core columns; at most {@link #MAX_NAME_BYTES}
 *     bytes of UTF-8)
 * @param dtype the element type of the values
 * @param kind one value per row, or a variable-length list, byte string or UTF-8 string per row
 * @param maxBytes most bytes of one row's values of a variable field; 0 for a fixed one
 */
public record SlotField(String name, Dtype dtype, Kind kind, int maxBytes) {
  /** Most UTF-8 bytes of a field's name (the field table of BATCH must stay small). */
  public static final int MAX_NAME_BYTES = 255;

  /** The columns every batch has; the extra fields come after them. */
  public static final Set<String> CORE = Set.of("image", "label", "key", "index");

  /** Element type of a field's values, with its code in BATCH and its width in bytes. */
  public enum Dtype {
    INT32(0, 4),
    INT64(1, 8),
    FLOAT32(2, 4),
    FLOAT64(3, 8),
    UINT8(4, 1);

    /** The code BATCH's field table carries. */
    public final int code;

    /** Bytes of one element. */
    public final int width;

    Dtype(int code, int width) {
      this.code = code;
      this.width = width;
    }
  }

  /** How a field's rows lie in the slot, with its code in BATCH. */
  public enum Kind {
    /** One element per row: {@code rows} elements. */
    FIXED(0),
    /** A list of elements per row (Arrow List, Binary): values and {@code rows + 1} offsets. */
    LIST(1),
    /** UTF-8 text per row (Arrow Utf8): uint8 values and {@code rows + 1} offsets. */
    STRING(2);

    /** The code BATCH's field table carries. */
    public final int code;

    Kind(int code) {
      this.code = code;
    }
  }

  /** Validates the name, and that only variable fields have (and need) a bound. */
  public SlotField {
    if (name == null || name.isEmpty() || CORE.contains(name)) {
      throw new IllegalArgumentException(
          "Invalid field name: "
              + (name == null ? "null" : "'" + name + "'")
              + " ("
              + CORE
              + " are the batch's own columns; an extra field needs another, non-empty name)");
    }
    int nameBytes = name.getBytes(StandardCharsets.UTF_8).length;
    if (nameBytes > MAX_NAME_BYTES) {
      throw new IllegalArgumentException(
          "Invalid field name: '"
              + name
              + "' is "
              + nameBytes
              + " bytes of UTF-8 (at most "
              + MAX_NAME_BYTES
              + ")");
    }
    if (dtype == null || kind == null) {
      throw new IllegalArgumentException("Invalid field '" + name + "': no dtype or kind");
    }
    if (kind == Kind.STRING && dtype != Dtype.UINT8) {
      throw new IllegalArgumentException(
          "Invalid field '" + name + "': a string field holds UINT8 values, not " + dtype);
    }
    if (kind == Kind.FIXED ? maxBytes != 0 : maxBytes < dtype.width) {
      throw new IllegalArgumentException(
          "Invalid field '"
              + name
              + "': max bytes per row "
              + maxBytes
              + " (must be "
              + (kind == Kind.FIXED ? "0 for a fixed-width field" : ">= " + dtype.width)
              + ")");
    }
  }

  /** A fixed-width field: one {@code dtype} value per row. */
  public static SlotField fixed(String name, Dtype dtype) {
    return new SlotField(name, dtype, Kind.FIXED, 0);
  }

  /** Whether the field's rows have variable length (values and offsets). */
  public boolean variable() {
    return kind != Kind.FIXED;
  }

  /** Bytes of the field's values in a slot of {@code maxRows} rows. */
  long valueBytes(int maxRows) {
    return variable() ? (long) maxRows * maxBytes : (long) maxRows * dtype.width;
  }

  /** Bytes of the field's offsets in a slot of {@code maxRows} rows (0 for a fixed field). */
  long offsetBytes(int maxRows) {
    return variable() ? 4L * (maxRows + 1) : 0;
  }

  /**
   * The slot field of Arrow column {@code f}: Int 32/64 and FloatingPoint single/double are fixed;
   * Utf8 a string; Binary and List of Int 32/64 or FloatingPoint single a list, of {@code maxBytes}
   * bytes per row at most.
   *
   * @throws IllegalArgumentException naming the column and its type for any other type
   */
  public static SlotField of(Field f, int maxBytes) {
    ArrowType t = f.getType();
    Dtype scalar = scalar(t);
    if (scalar != null) {
      return fixed(f.getName(), scalar);
    }
    if (t instanceof ArrowType.Utf8) {
      return new SlotField(f.getName(), Dtype.UINT8, Kind.STRING, maxBytes);
    }
    if (t instanceof ArrowType.Binary) {
      return new SlotField(f.getName(), Dtype.UINT8, Kind.LIST, maxBytes);
    }
    if (t instanceof ArrowType.List && f.getChildren().size() == 1) {
      Dtype element = scalar(f.getChildren().get(0).getType());
      if (element != null && element != Dtype.FLOAT64) {
        return new SlotField(f.getName(), element, Kind.LIST, maxBytes);
      }
    }
    throw new IllegalArgumentException(
        "Invalid field '"
            + f.getName()
            + "': Arrow type "
            + f
            + " cannot be fed (extra fields "
            + "are Int 32/64, FloatingPoint single/double, Utf8, Binary or List<Int32/Int64/Float32>)");
  }

  /**
   * The extra fields of a batch schema: every column but the four core ones, in schema order. Empty
   * for today's image + label batches.
   */
  public static List<SlotField> extras(Schema schema, int maxBytes) {
    List<SlotField> out = new ArrayList<>();
    for (Field f : schema.getFields()) {
      if (!CORE.contains(f.getName())) {
        out.add(of(f, maxBytes));
      }
    }
    return List.copyOf(out);
  }

  private static Dtype scalar(ArrowType t) {
    if (t instanceof ArrowType.Int i && i.getIsSigned()) {
      return i.getBitWidth() == 32 ? Dtype.INT32 : i.getBitWidth() == 64 ? Dtype.INT64 : null;
    }
    if (t instanceof ArrowType.FloatingPoint fp) {
      return fp.getPrecision() == FloatingPointPrecision.SINGLE
          ? Dtype.FLOAT32
          : fp.getPrecision() == FloatingPointPrecision.DOUBLE ? Dtype.FLOAT64 : null;
    }
    return null;
  }
}
