package dev.spindle.spark.batch;

import java.io.Serializable;
import java.util.List;

/**
 * A job's declared fields ({@code spark.spindle.fields}) in declaration order: empty means today's
 * image + label sample, byte for byte. Immutable; shipped to executors with a job's settings.
 *
 * @param declared every declared field, {@code image} and {@code label} included
 */
public record FieldSet(List<FieldSpec> declared) implements Serializable {
  /** No declaration: image and label as before fields existed. */
  public static final FieldSet NONE = new FieldSet(List.of());

  public FieldSet {
    declared = List.copyOf(declared);
  }

  /**
   * The fields {@code text} declares ({@link FieldSpec#parseAll}).
   *
   * @throws IllegalArgumentException naming the entry that is wrong
   */
  public static FieldSet parse(String text) {
    return new FieldSet(FieldSpec.parseAll(text));
  }

  /** True when nothing is declared: today's behaviour. */
  public boolean isEmpty() {
    return declared.isEmpty();
  }

  /** The {@code image} field, or null when none is declared (or nothing is: {@link #isEmpty}). */
  public FieldSpec image() {
    return named(FieldSpec.IMAGE);
  }

  /**
   * Whether samples carry an image: always without a declaration, else when a field named {@code
   * image} is declared. A job without one (text only, any fields) has no image column at all: no
   * decode, no image-size settings ({@code docs/guide/dataframe.md}).
   */
  public boolean hasImage() {
    return isEmpty() || image() != null;
  }

  /** The {@code label} field, or null. */
  public FieldSpec label() {
    return named(FieldSpec.LABEL);
  }

  /** Whether samples carry a label: always without a declaration, else when one is declared. */
  public boolean labelled() {
    return isEmpty() || label() != null;
  }

  /** The extra fields, in declaration order: the columns after {@code image .. index}. */
  public List<FieldSpec> extras() {
    return declared.stream().filter(FieldSpec::extra).toList();
  }

  private FieldSpec named(String name) {
    return declared.stream().filter(f -> f.name().equals(name)).findFirst().orElse(null);
  }

  /** As declared, comma-separated. */
  @Override
  public String toString() {
    return String.join(",", declared.stream().map(FieldSpec::toString).toList());
  }
}
