package dev.spindle.spark.plan;

import java.io.Serializable;
import java.util.Arrays;

/**
 * The sequence a split divides among ranks, as stretches of the epoch's sequence laid end to end:
 * the whole epoch for a fresh split, the rest after a leg for a resumed one (package documentation,
 * "Resume"). Each rank's real entries of a leg are one contiguous stretch, so the rest after legs
 * of {@code W_0, …, W_k} ranks has at most {@code W_0 + … + W_k} segments, however many samples it
 * holds.
 *
 * <p>Immutable and serializable; any thread.
 */
final class Segments implements Serializable {
  private static final long serialVersionUID = 1L;

  private final EpochSequence epoch;

  /** {@code starts[i]}: where segment i begins in the epoch's sequence. */
  private final long[] starts;

  /** {@code ends[i]}: the length of segments {@code 0..i} together. */
  private final long[] ends;

  private Segments(EpochSequence epoch, long[] starts, long[] ends) {
    this.epoch = epoch;
    this.starts = starts;
    this.ends = ends;
  }

  /** The whole epoch, one segment. */
  static Segments whole(EpochSequence epoch) {
    return new Segments(epoch, new long[] {0}, new long[] {epoch.total()});
  }

  EpochSequence epoch() {
    return epoch;
  }

  /** Entries in the sequence. */
  long length() {
    return ends.length == 0 ? 0 : ends[ends.length - 1];
  }

  int count() {
    return starts.length;
  }

  /** Copies {@code this[from, to)} into {@code out[at, …)}. */
  void copy(long from, long to, long[] out, int at) {
    copy(from, to, out, at, epoch.new Cursor());
  }

  /** The same, through {@code cursor}, which remembers the last window across calls. */
  void copy(long from, long to, long[] out, int at, EpochSequence.Cursor cursor) {
    checkRange(from, to);
    for (int i = segmentOf(from); from < to; i++) {
      long segmentStart = i == 0 ? 0 : ends[i - 1];
      long n = Math.min(to, ends[i]) - from;
      long p = starts[i] + (from - segmentStart);
      cursor.copy(p, p + n, out, at);
      at += (int) n;
      from += n;
    }
  }

  /** Appends the epoch stretches of {@code this[from, to)} to {@code b}. */
  void appendTo(Builder b, long from, long to) {
    checkRange(from, to);
    for (int i = segmentOf(from); from < to; i++) {
      long segmentStart = i == 0 ? 0 : ends[i - 1];
      long n = Math.min(to, ends[i]) - from;
      b.add(starts[i] + (from - segmentStart), n);
      from += n;
    }
  }

  /** Per source of {@code mixture}, the entries of {@code this[from, to)} it holds. */
  long[] countBySource(long from, long to, Mixture mixture) {
    checkRange(from, to);
    long[] counts = new long[mixture.sources()];
    for (int i = segmentOf(from); from < to; i++) {
      long segmentStart = i == 0 ? 0 : ends[i - 1];
      long n = Math.min(to, ends[i]) - from;
      long p = starts[i] + (from - segmentStart);
      for (int s = 0; s < counts.length; s++) {
        counts[s] += mixture.countBefore(s, p + n) - mixture.countBefore(s, p);
      }
      from += n;
    }
    return counts;
  }

  /** The segment holding position {@code p}: the first whose end is beyond it (ends increase). */
  private int segmentOf(long p) {
    int found = Arrays.binarySearch(ends, p);
    return found >= 0 ? found + 1 : -found - 1;
  }

  private void checkRange(long from, long to) {
    if (from < 0 || to > length() || from > to) {
      throw new IndexOutOfBoundsException(
          "Invalid range [" + from + ", " + to + ") of a sequence of " + length());
    }
  }

  /** Collects stretches of one epoch's sequence, joining adjacent ones. Caller's thread. */
  static final class Builder {
    private final EpochSequence epoch;
    private long[] starts = new long[16];
    private long[] ends = new long[16];
    private int count;

    Builder(EpochSequence epoch) {
      this.epoch = epoch;
    }

    void add(long start, long length) {
      if (length <= 0) {
        return;
      }
      long end = count == 0 ? 0 : ends[count - 1];
      if (count > 0 && starts[count - 1] + (end - (count == 1 ? 0 : ends[count - 2])) == start) {
        ends[count - 1] = end + length;
        return;
      }
      if (count == starts.length) {
        starts = Arrays.copyOf(starts, 2 * count);
        ends = Arrays.copyOf(ends, 2 * count);
      }
      starts[count] = start;
      ends[count++] = end + length;
    }

    Segments build() {
      return new Segments(epoch, Arrays.copyOf(starts, count), Arrays.copyOf(ends, count));
    }
  }
}
