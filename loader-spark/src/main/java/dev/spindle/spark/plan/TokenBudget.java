package dev.spindle.spark.plan;

import java.io.Serializable;
import java.util.Objects;

/**
 * A token budget: batches hold as many samples, in plan order, as fit both the batch size (rows)
 * and {@link #tokens()} in total of one variable-length list field's lengths (package
 * documentation, "Token budgets"). Immutable; any thread.
 *
 * <p>Two budgets are equal when they name the same field and count: the lengths are what a plan
 * packs by, not part of the setting. A budget read from a loader state's JSON has none until the
 * job {@linkplain LoaderState#withBudget attaches} its own.
 */
public final class TokenBudget implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String field;
  private final int tokens;

  /** The field's length of every sample, by dataset index; null until attached. */
  private final int[] lengths;

  private TokenBudget(String field, int tokens, int[] lengths) {
    this.field = Objects.requireNonNull(field, "field");
    if (tokens < 1) {
      throw new IllegalArgumentException(
          "Invalid spark.spindle.batchTokens: " + tokens + " (must be >= 1)");
    }
    this.tokens = tokens;
    this.lengths = lengths;
  }

  /** A budget of {@code tokens} over {@code field}, without lengths yet. */
  public static TokenBudget of(String field, int tokens) {
    return new TokenBudget(field, tokens, null);
  }

  /**
   * This budget with the field's length of every sample, by dataset index (kept, not copied: the
   * caller gives it up).
   */
  public TokenBudget withLengths(int[] sampleLengths) {
    return new TokenBudget(field, tokens, Objects.requireNonNull(sampleLengths, "lengths"));
  }

  /** The declared list field whose lengths are counted. */
  public String field() {
    return field;
  }

  /** The most tokens (sum of the field's lengths) a batch holds. */
  public int tokens() {
    return tokens;
  }

  /** Whether the samples' lengths are attached (a plan can be made). */
  public boolean attached() {
    return lengths != null;
  }

  /** Samples the attached lengths cover. */
  public long samples() {
    return lengths == null ? 0 : lengths.length;
  }

  /** The field's length in the sample of dataset index {@code index}. */
  public int length(long index) {
    if (lengths == null) {
      throw new IllegalStateException(
          "The token budget over field '" + field + "' has no sample lengths attached");
    }
    return lengths[Math.toIntExact(index)];
  }

  /** "field 'tokens', 4096 tokens", or "no token budget" for null. */
  static String describe(TokenBudget b) {
    return b == null ? "no token budget" : "field '" + b.field + "', " + b.tokens + " tokens";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TokenBudget b && b.tokens == tokens && b.field.equals(field);
  }

  @Override
  public int hashCode() {
    return 31 * field.hashCode() + tokens;
  }

  @Override
  public String toString() {
    return "TokenBudget[" + describe(this) + (lengths == null ? ", no lengths" : "") + "]";
  }
}
