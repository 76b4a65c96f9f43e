package dev.spindle.spark.plan;

/**
 * Derives a stretch of one rank's entries from its leg's sequence: real entries are the sequence's
 * {@code [start, start + real)}, padding repeats them (package documentation, "One epoch", step 4).
 * Only the windows those entries overlap are rebuilt, through one cursor, so a window the real
 * entries and the padding share is rebuilt once. Pure; caller's thread.
 */
final class RankEntries {
  private RankEntries() {}

  /** Entries {@code [from, to)} of a rank whose real entries are {@code source[start, +real)}. */
  static long[] derive(Segments source, long start, int real, int from, int to) {
    long[] out = new long[to - from];
    EpochSequence.Cursor cursor = source.epoch().new Cursor();
    int realEnd = Math.min(to, real);
    if (from < realEnd) {
      source.copy(start + from, start + realEnd, out, 0, cursor);
    }
    int padFrom = Math.max(from, real);
    if (padFrom < to) {
      pad(source, start, real, padFrom, to, out, padFrom - from, cursor);
    }
    return out;
  }

  /**
   * Padding entries {@code [from, to)}: entry {@code real + j} repeats the rank's own entry {@code
   * j mod real}, or the source's entry {@code j mod length} for a rank with no share. Derives each
   * entry of the cycle it needs once.
   */
  private static void pad(
      Segments source,
      long start,
      int real,
      int from,
      int to,
      long[] out,
      int at,
      EpochSequence.Cursor cursor) {
    boolean own = real > 0;
    long cycle = own ? real : source.length();
    long base = own ? start : 0;
    int count = to - from;
    long first = (from - real) % cycle;
    int span = (int) Math.min(cycle, count);
    long[] needed = new long[span];
    int head = (int) Math.min(span, cycle - first);
    source.copy(base + first, base + first + head, needed, 0, cursor);
    if (head < span) {
      source.copy(base, base + span - head, needed, head, cursor);
    }
    for (int i = 0; i < count; i++) {
      out[at + i] = needed[i % span];
    }
  }
}
