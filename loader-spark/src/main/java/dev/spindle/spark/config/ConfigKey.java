package dev.spindle.spark.config;

import java.util.function.Function;

/**
 * One {@code spark.spindle.*} setting: its key, default (as written in configuration files), one
 * line of documentation, and how a value is parsed and checked. Immutable.
 *
 * @param <T> the parsed type
 */
public record ConfigKey<T>(
    String key, String defaultValue, String doc, Function<String, T> parser) {

  /** Parses {@code value}; a bad value fails naming the key, the value and what is allowed. */
  public T parse(String value) {
    return parse(value, key);
  }

  /**
   * Parses {@code value} that came from {@code source} (the key, or the command-line flag that
   * stands for it); a bad value fails naming the source, the value and what is allowed.
   */
  public T parse(String value, String source) {
    try {
      return parser.apply(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Invalid value for " + source + ": '" + value + "' (" + e.getMessage() + ")", e);
    }
  }

  /** The default, parsed. */
  public T defaultParsed() {
    return parse(defaultValue);
  }
}
