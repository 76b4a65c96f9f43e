package dev.spindle.spark.shard;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses a {@link BracePattern} into a sequence of parts, and counts and names what a sequence
 * expands to without expanding it. Stateless; any thread.
 */
final class BraceParser {
  private static final long MAX_NAMES = BracePattern.MAX_NAMES;
  private static final Pattern RANGE =
      Pattern.compile("(\\d{1,18})\\.\\.(\\d{1,18})(?:\\.\\.(\\d{1,18}))?");

  private BraceParser() {}

  /** The parts of a whole pattern; throws naming the pattern and position when malformed. */
  static List<Part> parse(String pattern) {
    Parser p = new Parser(pattern);
    List<Part> parts = p.sequence(false);
    if (p.pos < pattern.length()) { // only a '}' stops the top-level sequence
      throw p.error("'}' without a matching '{'", p.pos);
    }
    return parts;
  }

  /** One piece of a sequence: a literal text, a comma list or a range. */
  sealed interface Part permits Literal, Alternatives, Range {
    long count();

    String name(long i);
  }

  record Literal(String text) implements Part {
    public long count() {
      return 1;
    }

    public String name(long i) {
      return text;
    }
  }

  record Alternatives(List<List<Part>> choices) implements Part {
    public long count() {
      long n = 0;
      for (List<Part> c : choices) {
        n = Math.min(MAX_NAMES + 1, n + BraceParser.count(c));
      }
      return n;
    }

    public String name(long i) {
      for (List<Part> c : choices) {
        long n = BraceParser.count(c);
        if (i < n) {
          return BraceParser.name(c, i);
        }
        i -= n;
      }
      throw new IndexOutOfBoundsException();
    }
  }

  record Range(long from, long to, long step, int width) implements Part {
    public long count() {
      return Math.abs(to - from) / step + 1;
    }

    public String name(long i) {
      long value = from <= to ? from + i * step : from - i * step;
      String digits = Long.toString(value);
      return digits.length() >= width ? digits : "0".repeat(width - digits.length()) + digits;
    }
  }

  /** How many names a sequence expands to, at most {@code MAX_NAMES + 1}. */
  static long count(List<Part> sequence) {
    long n = 1;
    for (Part p : sequence) {
      long c = p.count(); // >= 1
      n = n > (MAX_NAMES + 1) / c ? MAX_NAMES + 1 : Math.min(MAX_NAMES + 1, n * c);
    }
    return n;
  }

  /** The {@code i}th name of a sequence. */
  static String name(List<Part> sequence, long i) {
    StringBuilder b = new StringBuilder();
    long rest = i;
    String[] pieces = new String[sequence.size()];
    for (int k = sequence.size() - 1; k >= 0; k--) {
      long c = sequence.get(k).count();
      pieces[k] = sequence.get(k).name(rest % c);
      rest /= c;
    }
    for (String piece : pieces) {
      b.append(piece);
    }
    return b.toString();
  }

  /** A recursive-descent parser over the pattern's characters. */
  private static final class Parser {
    private final String text;
    private int pos;

    Parser(String text) {
      this.text = text;
    }

    /** Parts up to the end, or (inside a group) up to a ',' or '}' at this level. */
    List<Part> sequence(boolean inGroup) {
      List<Part> parts = new ArrayList<>();
      StringBuilder literal = new StringBuilder();
      while (pos < text.length()) {
        char c = text.charAt(pos);
        if (c == '}' || (inGroup && c == ',')) {
          break;
        }
        if (c == '{') {
          flush(literal, parts);
          parts.add(group());
        } else {
          literal.append(c);
          pos++;
        }
      }
      flush(literal, parts);
      return parts;
    }

    private Part group() {
      int open = pos++;
      Range range = range(open);
      if (range != null) {
        return range;
      }
      List<List<Part>> choices = new ArrayList<>();
      choices.add(sequence(true));
      while (pos < text.length() && text.charAt(pos) == ',') {
        pos++;
        choices.add(sequence(true));
      }
      if (pos >= text.length()) {
        throw error("'{' is never closed", open);
      }
      pos++; // the '}'
      if (choices.size() < 2) {
        throw error(
            "the group at "
                + open
                + " is neither a comma list ({a,b}) nor a numeric"
                + " range ({000..099})",
            open);
      }
      return new Alternatives(choices);
    }

    /** A numeric range starting after the '{' at {@code open}, or null when it is none. */
    private Range range(int open) {
      int close = text.indexOf('}', pos);
      if (close < 0) {
        return null;
      }
      Matcher m = RANGE.matcher(text.substring(pos, close));
      if (!m.matches()) {
        return null;
      }
      long step = m.group(3) == null ? 1 : Long.parseLong(m.group(3));
      if (step == 0) {
        throw error("the range's step is 0", open);
      }
      String from = m.group(1);
      String to = m.group(2);
      boolean padded =
          (from.length() > 1 && from.startsWith("0")) || (to.length() > 1 && to.startsWith("0"));
      pos = close + 1;
      return new Range(
          Long.parseLong(from),
          Long.parseLong(to),
          step,
          padded ? Math.max(from.length(), to.length()) : 0);
    }

    private static void flush(StringBuilder literal, List<Part> parts) {
      if (!literal.isEmpty()) {
        parts.add(new Literal(literal.toString()));
        literal.setLength(0);
      }
    }

    IllegalArgumentException error(String what, int at) {
      return new IllegalArgumentException(
          "Invalid brace pattern \"" + text + "\" at position " + at + ": " + what);
    }
  }
}
