package dev.spindle.spark.shard;

import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.batch.FieldSet;
import dev.spindle.spark.batch.FieldSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Collects the parts of one sample and names what is missing or wrong; the first problem found is
 * the one reported. The first image entry is the image (other image extensions are further views,
 * not read), the first label entry the label (a second one must agree with it). One thread.
 */
final class SampleBuilder {
  private static final int LISTED_ENTRIES = 5;

  /** ".jpg, .jpeg, ... or .gif": the extensions of a tar sample's image entry. */
  private static final String IMAGE_ENTRIES = imageEntries();

  private final String shard;
  private final String key;
  private final long position;
  private final SampleLimits limits;
  private final List<String> entryNames = new ArrayList<>();
  private final Map<String, String> byExtension = new LinkedHashMap<>();
  private byte[] image;
  private String imageName;
  private String imageFile;
  private Integer label;
  private String labelEntry; // "label '3' in k.cls": the entry the label came from
  private String problem;
  private Sample.Stored stored;
  private final List<FieldSpec> extras;
  private final Object[] values; // the extra fields' values, in declaration order

  SampleBuilder(String shard, String key, long position, SampleLimits limits) {
    this.shard = shard;
    this.key = key;
    this.position = position;
    this.limits = limits;
    this.extras = limits.fields().isEmpty() ? List.of() : limits.fields().extras();
    this.values = new Object[extras.size()];
  }

  /** Notes one entry of the sample (tar): a second entry with the same extension is a problem. */
  SampleBuilder entry(String name, String extension) {
    entryNames.add(name);
    String first = byExtension.putIfAbsent(extension, name);
    if (first != null) {
      problem(
          String.format(
              "two entries with extension '%s' in sample '%s': %s and %s",
              extension, key, first, name));
    }
    return this;
  }

  /** True while the sample has no image and no problem: an image entry is worth reading. */
  boolean wantsImage() {
    return image == null && problem == null;
  }

  /**
   * True while the sample has no problem: a label entry is worth reading, the first for the label,
   * a later one ({@code .label} after {@code .cls}) to check that it says the same.
   */
  boolean wantsLabelEntry() {
    return problem == null;
  }

  /** The image, read from the file {@code name} (a tar entry, an image folder's file). */
  SampleBuilder image(byte[] bytes, String name) {
    imageValue(bytes, name);
    imageFile = name;
    return this;
  }

  /**
   * The image, read from a value that is no file of its own (a Parquet row's column); {@code where}
   * names it in messages ({@code image.bytes of row 5}).
   */
  SampleBuilder imageValue(byte[] bytes, String where) {
    image = bytes;
    imageName = where;
    return this;
  }

  /** A label known as a number, e.g. an image folder's class index ({@code what} names it). */
  SampleBuilder label(long value, String what) {
    String wrong = LabelRule.problem(value, limits);
    if (wrong != null) {
      problem(what + " " + wrong);
    } else {
      label = (int) value;
    }
    return this;
  }

  /**
   * A label entry's bytes, by {@link LabelRule}. A second label entry ({@code .cls} and {@code
   * .label}) must hold the same number: which one a trainer meant cannot be known, so two that
   * disagree are the sample's problem, naming both.
   */
  SampleBuilder labelText(byte[] text, String entryName) {
    String value = LabelRule.text(text);
    if (value.isEmpty()) {
      return problem("label entry " + entryName + " is empty");
    }
    String what = "label '" + LabelRule.abbreviate(value) + "' in " + entryName;
    long number = LabelRule.parse(value);
    if (number < 0) {
      return problem(what + " " + LabelRule.NOT_PLAIN);
    }
    if (label == null) {
      labelEntry = what;
      return label(number, what);
    }
    return number == label
        ? this
        : problem("label entries disagree: " + labelEntry + ", " + what + " (key '" + key + "')");
  }

  /** The extra fields this sample must have ({@link FieldSet#extras()}), in order. */
  List<FieldSpec> extras() {
    return extras;
  }

  /**
   * True while extra field {@code i} has no value and the sample no problem: its member is worth
   * reading.
   */
  boolean wantsField(int i) {
    return values[i] == null && problem == null;
  }

  /**
   * Extra field {@code i}'s value from {@code bytes}, read from {@code where} ({@link
   * FieldValues}): one that does not parse as its type is the sample's problem.
   */
  SampleBuilder fieldBytes(int i, byte[] bytes, String where) {
    try {
      values[i] = FieldValues.parse(extras.get(i), bytes, where, limits.maxFieldBytes());
    } catch (IllegalArgumentException e) {
      problem(e.getMessage() + " (key '" + key + "')");
    }
    return this;
  }

  /** Extra field {@code i}'s value, already of its type (a Parquet or Arrow column's). */
  SampleBuilder fieldValue(int i, Object value) {
    values[i] = value;
    return this;
  }

  /** Marks the sample as a stored row of a preprocess output: its image is decoded pixels. */
  SampleBuilder stored(long index) {
    stored = new Sample.Stored(index);
    return this;
  }

  SampleBuilder problem(String reason) {
    if (problem == null) {
      problem = reason;
    }
    return this;
  }

  Sample build() {
    FieldSet fields = limits.fields();
    if (!fields.isEmpty()) {
      return buildDeclared(fields);
    }
    if (problem == null && image == null) {
      problem = "no image entry (" + IMAGE_ENTRIES + ") for key '" + key + "'" + entriesNote();
    }
    if (problem == null && label == null) {
      problem = "no label entry (.cls or .label) for key '" + key + "'" + entriesNote();
    }
    return new Sample(shard, key, position, image, imageName, imageFile, label, problem, stored);
  }

  /**
   * The sample of a job that declares its fields: each declared one must be there; a job without a
   * {@code label} field labels every sample {@link BatchSchema#IGNORED_LABEL}; one without an
   * {@code image} field has samples without an image (null).
   */
  private Sample buildDeclared(FieldSet fields) {
    if (problem == null && image == null && fields.image() != null) {
      problem = missing(fields.image());
    }
    if (fields.label() == null) {
      label = BatchSchema.IGNORED_LABEL;
    } else if (problem == null && label == null) {
      problem = missing(fields.label());
    }
    for (int i = 0; i < values.length && problem == null; i++) {
      if (values[i] == null) {
        problem = missing(extras.get(i));
      }
    }
    List<Object> kept = problem == null ? Arrays.asList(values.clone()) : List.of();
    return new Sample(
        shard, key, position, image, imageName, imageFile, label, problem, stored, kept);
  }

  private String missing(FieldSpec field) {
    if (entryNames.isEmpty() && stored == null) { // no tar entries: an image folder's file
      return "no value for field '"
          + field.name()
          + "' of key '"
          + key
          + "': an image folder's sample has only its image and its class";
    }
    return "no '."
        + field.source()
        + "' member for field '"
        + field.name()
        + "' of key '"
        + key
        + "'"
        + entriesNote();
  }

  private static String imageEntries() {
    List<String> names = WebDatasetKeys.TAR_IMAGES.stream().map(e -> "." + e).toList();
    return String.join(", ", names.subList(0, names.size() - 1))
        + " or "
        + names.get(names.size() - 1);
  }

  /** The sample's entries and the rule that grouped them, for a sample that lacks a part. */
  private String entriesNote() {
    if (entryNames.isEmpty()) {
      return "";
    }
    int n = entryNames.size();
    String listed = String.join(", ", entryNames.subList(0, Math.min(LISTED_ENTRIES, n)));
    String more = n > LISTED_ENTRIES ? ", … (" + n + " in all)" : "";
    String example = "";
    for (Map.Entry<String, String> e : byExtension.entrySet()) {
      if (e.getKey().contains(".")) {
        example = ": " + e.getValue() + " is key '" + key + "' with extension '" + e.getKey() + "'";
        break;
      }
    }
    return "; its entries: "
        + listed
        + more
        + " (the key is the file name up to its first dot"
        + example
        + ")";
  }
}
