package dev.spindle.spark.batch;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One declared field of a sample ({@code spark.spindle.fields}, {@code --fields}): its column name,
 * where its value comes from (a WebDataset tar member's extension, {@code jpg}, {@code txt}, {@code
 * seg.png}; or a Parquet column's name) and its type. The field named {@code image} is the decoded
 * image column, the field named {@code label} the int32 label column; every other field is an
 * <em>extra field</em>, a column after {@code image}, {@code label}, {@code key}, {@code index}.
 * Immutable.
 *
 * <p>An entry without {@code :TYPE} takes its type from its source, by WebDataset's conventions
 * ({@link #defaultType}).
 *
 * @param name the column's name
 * @param source the tar member extension (lower case) or Parquet column that holds the value
 * @param type the column's type
 */
public record FieldSpec(String name, String source, FieldType type) implements Serializable {
  /** The name of the field that is today's image column. */
  public static final String IMAGE = BatchSchema.IMAGE;

  /** The name of the field that is today's label column. */
  public static final String LABEL = BatchSchema.LABEL;

  /**
   * Image member extensions, in the order messages list them: an image folder's, WebDataset's other
   * Netpbm names ({@code pbm}, {@code pnm}) and {@code gif} (its first frame is decoded).
   */
  public static final List<String> IMAGE_EXTENSIONS =
      List.of(
          "jpg", "jpeg", "png", "webp", "bmp", "ppm", "pgm", "pbm", "pnm", "tif", "tiff", "gif");

  /** Extensions WebDataset's decoders read as an integer ({@code webdataset/autodecode.py}). */
  private static final Set<String> INTEGER_EXTENSIONS =
      Set.of("cls", "cls2", "class", "count", "index", "inx", "id", "label");

  /** Extensions WebDataset's decoders read as text; {@code json} is validated as JSON too. */
  private static final Set<String> TEXT_EXTENSIONS =
      Set.of("txt", "text", "transcript", "json", "jsn");

  /** Columns every batch or data source row already has: no field may take their names. */
  private static final Set<String> RESERVED =
      Set.of(BatchSchema.KEY, BatchSchema.INDEX, "shard", "height", "width", "channels", "format");

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  public FieldSpec {
    if (name.equals(IMAGE) != (type == FieldType.IMAGE)) {
      throw new IllegalArgumentException(
          name.equals(IMAGE)
              ? "the field 'image' is the image column: its type must be image, not " + type
              : "field '" + name + "' is of type image: only the field named 'image' may be");
    }
    if (name.equals(LABEL) && type != FieldType.INT32 && type != FieldType.INT64) {
      throw new IllegalArgumentException(
          "the field 'label' is the int32 label column: its type must be int32 or int64, not "
              + type);
    }
  }

  /** True for a field other than {@code image} and {@code label}: a column of its own. */
  public boolean extra() {
    return !name.equals(IMAGE) && !name.equals(LABEL);
  }

  /**
   * The type of a field whose source is {@code source} when no type is written: an image extension
   * is {@code image}; {@code cls}, {@code label}, {@code index}, {@code id}, ... {@code int64};
   * {@code txt}, {@code text}, {@code json} {@code string}; anything else {@code bytes}. The last
   * part of a dotted source decides ({@code seg.png} is an image).
   */
  public static FieldType defaultType(String source) {
    String s = source.toLowerCase(Locale.ROOT);
    String last = s.substring(s.lastIndexOf('.') + 1);
    if (IMAGE_EXTENSIONS.contains(last)) {
      return FieldType.IMAGE;
    }
    if (INTEGER_EXTENSIONS.contains(s)) {
      return FieldType.INT64;
    }
    return TEXT_EXTENSIONS.contains(s) ? FieldType.STRING : FieldType.BYTES;
  }

  /**
   * The type of field {@code name} without a written type: {@code image} is the image and {@code
   * label} an int64 whatever their source (a Parquet column's name says nothing), others by {@link
   * #defaultType(String)}.
   */
  static FieldType defaultType(String name, String source) {
    if (name.equals(IMAGE)) {
      return FieldType.IMAGE;
    }
    return name.equals(LABEL) ? FieldType.INT64 : defaultType(source);
  }

  /** True when a value from {@code source} must be valid JSON ({@code json}, {@code jsn}). */
  public boolean json() {
    return source.equals("json") || source.equals("jsn");
  }

  /**
   * The fields {@code text} declares: comma-separated {@code NAME=SOURCE[:TYPE]}; blank = none.
   *
   * @throws IllegalArgumentException naming the entry that is wrong and, for a type, every valid
   *     type
   */
  public static List<FieldSpec> parseAll(String text) {
    List<FieldSpec> fields = new ArrayList<>();
    Set<String> names = new HashSet<>();
    if (text.isBlank()) {
      return fields;
    }
    for (String entry : text.split(",", -1)) {
      FieldSpec f = parseEntry(entry.trim());
      if (!names.add(f.name)) {
        throw new IllegalArgumentException(
            "entry '" + entry.trim() + "': field '" + f.name + "' is declared twice");
      }
      fields.add(f);
    }
    return List.copyOf(fields);
  }

  private static FieldSpec parseEntry(String entry) {
    try {
      int eq = entry.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("expected NAME=SOURCE[:TYPE]");
      }
      String name = entry.substring(0, eq).trim();
      String rest = entry.substring(eq + 1).trim();
      int colon = rest.indexOf(':');
      String source = (colon < 0 ? rest : rest.substring(0, colon)).trim();
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "the name '" + name + "' is not a column name (letters, digits, '_')");
      }
      if (RESERVED.contains(name.toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException("'" + name + "' is a column every row already has");
      }
      if (source.isEmpty() || source.contains("=")) {
        throw new IllegalArgumentException("expected NAME=SOURCE[:TYPE] with a source");
      }
      FieldType type =
          colon < 0 ? defaultType(name, source) : FieldType.parse(rest.substring(colon + 1).trim());
      return new FieldSpec(name, source, type);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("entry '" + entry + "': " + e.getMessage(), e);
    }
  }

  /** As declared: {@code caption=txt:string}. */
  @Override
  public String toString() {
    return name + "=" + source + ":" + type;
  }
}
