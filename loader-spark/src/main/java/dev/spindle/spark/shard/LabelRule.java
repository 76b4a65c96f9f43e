package dev.spindle.spark.shard;

/**
 * The label rule: a label entry holds a plain ASCII decimal number (digits 0-9 only: no sign, no
 * digits of other scripts, which {@link Integer#parseInt} would take), ASCII whitespace around it
 * allowed. The value must fit the int32 label column and, when the number of classes is known
 * ({@link SampleLimits#numClasses()}), be below it. A label that is a number already (an image
 * folder's class index, a Parquet integer column) is held to the same range, and must not be
 * negative. Stateless.
 */
final class LabelRule {
  static final String NOT_PLAIN = "is not a plain decimal number (ASCII digits 0-9 only, no sign)";

  private LabelRule() {}

  /** A label entry's text without the ASCII whitespace around it, invalid UTF-8 escaped. */
  static String text(byte[] bytes) {
    int from = 0;
    int to = bytes.length;
    while (from < to && isSpace(bytes[from])) {
      from++;
    }
    while (to > from && isSpace(bytes[to - 1])) {
      to--;
    }
    return EscapedUtf8.text(bytes, from, to);
  }

  /** The value of a text of ASCII digits (past int32 it stays just over), or -1 for other text. */
  static long parse(String text) {
    long value = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      value = Math.min(value * 10 + (c - '0'), Integer.MAX_VALUE + 1L);
    }
    return value;
  }

  /** Why a label value is refused ("is over …"), or null when it is a valid label. */
  static String problem(long value, SampleLimits limits) {
    if (value < 0) {
      return "is negative";
    }
    if (value > Integer.MAX_VALUE) {
      return "is over " + Integer.MAX_VALUE + ", the largest int32 label";
    }
    if (limits.numClasses() > 0 && value >= limits.numClasses()) {
      return "is not below spark.spindle.numClasses=" + limits.numClasses();
    }
    return null;
  }

  static String abbreviate(String text) {
    return text.length() <= 40 ? text : text.substring(0, 40) + "…";
  }

  private static boolean isSpace(byte b) {
    return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == 0x0b;
  }
}
