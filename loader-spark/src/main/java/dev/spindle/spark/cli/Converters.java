package dev.spindle.spark.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Typed flag values whose refusal says what is allowed: {@code 'abc' (must be an integer > 0)}. */
final class Converters {
  private Converters() {}

  /** An integer > 0. */
  static final class PositiveInt implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      return (int) integer(value, 1, Integer.MAX_VALUE, "an integer > 0");
    }
  }

  /** An integer >= 0. */
  static final class NonNegativeInt implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      return (int) integer(value, 0, Integer.MAX_VALUE, "an integer >= 0");
    }
  }

  /** Any 64-bit integer. */
  static final class AnyLong implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      return integer(value, Long.MIN_VALUE, Long.MAX_VALUE, "an integer");
    }
  }

  /** A number > 0, such as 0.5. */
  static final class PositiveDouble implements ITypeConverter<Double> {
    @Override
    public Double convert(String value) {
      try {
        double d = Double.parseDouble(value.trim());
        if (d > 0 && Double.isFinite(d)) {
          return d;
        }
      } catch (NumberFormatException e) {
        // the message below says what is allowed
      }
      throw new TypeConversionException("'" + value + "' (must be a number > 0)");
    }
  }

  static long integer(String value, long min, long max, String allowed) {
    try {
      long v = Long.parseLong(value.trim());
      if (v >= min && v <= max) {
        return v;
      }
    } catch (NumberFormatException e) {
      // the message below says what is allowed
    }
    throw new TypeConversionException("'" + value + "' (must be " + allowed + ")");
  }
}
