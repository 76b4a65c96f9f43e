package dev.spindle.spark.config;

import java.util.Locale;

/**
 * The one "did you mean" helper of Spindle: the candidate closest to a misspelled name by edit
 * distance (Levenshtein), ignoring case, for unknown keys, data source options and command-line
 * flags alike. Stateless; any thread.
 */
public final class Nearest {
  private Nearest() {}

  /**
   * The candidate closest to {@code name} ignoring case; the first of equally close ones, null when
   * there are none.
   */
  public static String among(String name, Iterable<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : candidates) {
      int d = distance(name, candidate);
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    return best;
  }

  /** The edit distance between {@code a} and {@code b} ignoring case. */
  public static int distance(String a, String b) {
    return editDistance(a.toLowerCase(Locale.ROOT), b.toLowerCase(Locale.ROOT));
  }

  private static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
