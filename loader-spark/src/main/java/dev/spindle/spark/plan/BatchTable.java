package dev.spindle.spark.plan;

import java.io.Serializable;
import java.util.Arrays;

/**
 * The batches of one epoch packed to a token budget (package documentation, "Token budgets", step
 * 4): batch {@code t} is the epoch sequence's positions {@code [start(t), start(t + 1))}. Windows
 * are packed one at a time, each in its planned order, so a window's batches depend on its own
 * samples' lengths only and no batch crosses a window's end.
 *
 * <p>Holds one position and one token count per batch (12 bytes), never the samples' lengths.
 * Immutable and serializable; any thread.
 */
final class BatchTable implements Serializable {
  private static final long serialVersionUID = 1L;

  private final EpochSequence samples;
  private final long[] starts;
  private final int[] tokens;

  private BatchTable(EpochSequence samples, long[] starts, int[] tokens) {
    this.samples = samples;
    this.starts = starts;
    this.tokens = tokens;
  }

  /** The epoch's sequence of samples the batches are cut from. */
  EpochSequence samples() {
    return samples;
  }

  /**
   * Packs {@code epoch} window by window: a sample joins the open batch unless that already holds
   * {@code maxRows} rows or the sample's length would take it over the budget; a batch closes at
   * its window's end. A sample longer than the budget is a batch of its own.
   */
  static BatchTable pack(EpochSequence epoch, int window, int maxRows, TokenBudget budget) {
    long n = epoch.total();
    Growing out = new Growing();
    long[] buf = new long[(int) Math.min(window, Math.max(1, n))];
    EpochSequence.Cursor cursor = epoch.new Cursor();
    for (long from = 0; from < n; from += window) {
      int len = (int) Math.min(window, n - from);
      cursor.copy(from, from + len, buf, 0);
      int rows = 0;
      long sum = 0;
      for (int i = 0; i < len; i++) {
        int l = budget.length(buf[i]);
        if (rows > 0 && (rows == maxRows || sum + l > budget.tokens())) {
          out.close(from + i, sum);
          rows = 0;
          sum = 0;
        }
        rows++;
        sum += l;
      }
      out.close(from + len, sum);
    }
    return out.build(epoch);
  }

  /** Batches in the epoch. */
  int batches() {
    return starts.length - 1;
  }

  /** Where batch {@code t} begins in the epoch's sequence. */
  long start(int t) {
    return starts[t];
  }

  /** Rows (samples) of batch {@code t}. */
  int rows(int t) {
    return (int) (starts[t + 1] - starts[t]);
  }

  /** Tokens of batch {@code t}: the sum of its samples' lengths of the budget's field. */
  int tokens(int t) {
    return tokens[t];
  }

  /**
   * The sequence a split divides: batch numbers {@code 0, 1, …, batches()-1} in order (one shard,
   * window 1: nothing is shuffled), so the split, padding and resume of the package documentation
   * apply to whole batches unchanged.
   */
  EpochSequence units() {
    return new EpochSequence(new long[] {0, batches()}, 0, 0, 1);
  }

  /** Collects batch starts; the first batch starts at 0. Caller's thread. */
  private static final class Growing {
    private long[] starts = new long[] {0, 0, 0, 0, 0, 0, 0, 0};
    private int[] tokens = new int[8];
    private int count;

    void close(long end, long sum) {
      if (count + 2 > starts.length) {
        starts = Arrays.copyOf(starts, 2 * starts.length);
        tokens = Arrays.copyOf(tokens, 2 * tokens.length);
      }
      tokens[count] = (int) Math.min(Integer.MAX_VALUE, sum);
      starts[++count] = end;
    }

    BatchTable build(EpochSequence epoch) {
      return new BatchTable(epoch, Arrays.copyOf(starts, count + 1), Arrays.copyOf(tokens, count));
    }
  }
}
