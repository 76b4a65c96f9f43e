package dev.spindle.spark.shard;

import java.util.ArrayList;
import java.util.List;

/**
 * A WebDataset brace pattern ({@code train-{000000..001281}.tar}), expanded as Python's {@code
 * braceexpand} does: a group is a comma list ({@code {a,b,c}}, alternatives may hold groups
 * themselves) or a numeric range ({@code {0..99}}, {@code {000..099}}, with an optional step {@code
 * {0..98..2}}; a bound written with a leading zero pads every number to the wider bound's width; a
 * range may count down). Several groups multiply, the first varying slowest. Unlike {@code
 * braceexpand}, a group that is neither ({@code {abc}}, {@code {}}) is an error, not literal text,
 * and there are no escapes: a '{' or '}' always belongs to a group.
 *
 * <p>The number of names is computed before anything is expanded; a pattern that names more than
 * {@value #MAX_NAMES} is refused. Immutable once parsed; any thread.
 */
public final class BracePattern {
  /** The most names a pattern may expand to. */
  public static final long MAX_NAMES = 10_000_000L;

  private final String text;
  private final List<BraceParser.Part> parts;

  private BracePattern(String text, List<BraceParser.Part> parts) {
    this.text = text;
    this.parts = parts;
  }

  /** True when {@code input} is a brace pattern rather than a path: it holds a '{' or a '}'. */
  public static boolean isPattern(String input) {
    return input.indexOf('{') >= 0 || input.indexOf('}') >= 0;
  }

  /**
   * Parses a pattern and checks its size.
   *
   * @throws IllegalArgumentException naming the pattern and the position (from 0) of what is
   *     malformed, or the number of names when there are more than {@value #MAX_NAMES}
   */
  public static BracePattern parse(String pattern) {
    BracePattern parsed = new BracePattern(pattern, BraceParser.parse(pattern));
    if (parsed.size() > MAX_NAMES) {
      throw new IllegalArgumentException(
          "Brace pattern \""
              + pattern
              + "\" names more than "
              + MAX_NAMES
              + " shards (the most a pattern may name)");
    }
    return parsed;
  }

  /** How many names the pattern expands to, at most {@value #MAX_NAMES}. */
  public long size() {
    return BraceParser.count(parts);
  }

  /** The names, in pattern order (the first group varies slowest). */
  public List<String> expand() {
    long n = size();
    List<String> names = new ArrayList<>((int) n);
    for (long i = 0; i < n; i++) {
      names.add(BraceParser.name(parts, i));
    }
    return names;
  }

  /** The text before the first group: the part of every name that is the same. */
  public String literalPrefix() {
    return parts.isEmpty() || !(parts.get(0) instanceof BraceParser.Literal l) ? "" : l.text();
  }

  @Override
  public String toString() {
    return text;
  }
}
