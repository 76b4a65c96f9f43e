package dev.spindle.spark.plan;

import java.io.Serializable;
import java.util.Arrays;

/**
 * One rank's part of an epoch plan: its sample sequence (dataset indices, in delivery order), cut
 * into {@link #batches()} full batches of {@link #batchSize()}. Entries at positions {@code >=
 * realSamples()} are padding (repeats, only under {@link Remainder#PAD} or after a resume with a
 * different world size). Batches before {@link #firstBatch()} were delivered before a resume and
 * must be skipped.
 *
 * <p>Under a token budget ({@link #packed()}) the leg's sequence is of whole packed batches, one
 * entry each, and a batch's rows ({@link #batchRows(int)}, at most {@link #batchSize()}) are the
 * samples its packed batch holds (package documentation, "Token budgets"); a padding batch is
 * padded in every row.
 *
 * <p>The plan holds no indices: it is a stretch of its leg's sequence ({@link Segments}) plus
 * padding, and derives the indices of any batches on demand from the windows they overlap (see the
 * package documentation, "Cost"). {@link #index(int)} keeps the rank's whole sequence once asked.
 *
 * <p>Immutable and serializable: safe to share between threads and to ship to executors. Every
 * method that returns an array returns a new one owned by the caller.
 */
public final class RankPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  private final int epoch;
  private final int leg;
  private final int rank;
  private final int batchSize;
  private final Segments source;
  private final long start;
  private final int length;
  private final int realSamples;
  private final int firstBatch;

  /**
   * Null: entries are samples, batches {@code batchSize} of them; else entries are packed batches.
   */
  private final BatchTable table;

  private transient volatile long[] all;

  /**
   * @param source the leg's sequence
   * @param start where this rank's real entries begin in {@code source}
   * @param length entries, padding included: a whole number of batches
   * @param realSamples real entries: {@code source[start, start + realSamples)}
   */
  RankPlan(
      int epoch,
      int leg,
      int rank,
      int batchSize,
      Segments source,
      long start,
      int length,
      int realSamples,
      int firstBatch) {
    this(epoch, leg, rank, batchSize, source, start, length, realSamples, firstBatch, null);
  }

  private RankPlan(
      int epoch,
      int leg,
      int rank,
      int batchSize,
      Segments source,
      long start,
      int length,
      int realSamples,
      int firstBatch,
      BatchTable table) {
    this.table = table;
    this.epoch = epoch;
    this.leg = leg;
    this.rank = rank;
    this.batchSize = batchSize;
    this.source = source;
    this.start = start;
    this.length = length;
    this.realSamples = realSamples;
    this.firstBatch = firstBatch;
  }

  /** The same plan, with the first {@code consumed} batches marked as already delivered. */
  RankPlan startingAt(int consumed) {
    return new RankPlan(
        epoch, leg, rank, batchSize, source, start, length, realSamples, consumed, table);
  }

  /**
   * This plan of whole batches (a split with batch size 1 of {@code table}'s batch numbers) as one
   * of packed batches of at most {@code maxRows} rows (package documentation, "Token budgets").
   */
  RankPlan packed(BatchTable packedBatches, int maxRows) {
    return new RankPlan(
        epoch, leg, rank, maxRows, source, start, length, realSamples, firstBatch, packedBatches);
  }

  /** Entries of the leg's sequence per batch: {@code batchSize}, or 1 (a packed batch). */
  private int per() {
    return table == null ? batchSize : 1;
  }

  public int epoch() {
    return epoch;
  }

  /** 0 for the epoch's original split; k after the k-th resume that re-split the epoch. */
  public int leg() {
    return leg;
  }

  public int rank() {
    return rank;
  }

  /** Rows per batch; with a token budget, the most rows a batch may hold. */
  public int batchSize() {
    return batchSize;
  }

  /** Whether batches are packed to a token budget (their rows vary, at most {@link #batchSize}). */
  public boolean packed() {
    return table != null;
  }

  /** All batches of this rank in this leg, delivered or not; equal on every rank. */
  public int batches() {
    return length / per();
  }

  /** Rows of batch {@code k}: {@link #batchSize()}, or its packed samples under a token budget. */
  public int batchRows(int k) {
    checkBatches(k, k + 1);
    return table == null ? batchSize : table.rows(unit(k));
  }

  /**
   * Tokens of batch {@code k} (the budget field's lengths summed, padding batches included), or 0
   * without a token budget.
   */
  public long batchTokens(int k) {
    checkBatches(k, k + 1);
    return table == null ? 0 : table.tokens(unit(k));
  }

  /** Rows of batches {@code [fromBatch, toBatch)}, padded rows included. */
  public long rows(int fromBatch, int toBatch) {
    checkBatches(fromBatch, toBatch);
    if (table == null) {
      return (long) (toBatch - fromBatch) * batchSize;
    }
    long n = 0;
    for (long u : RankEntries.derive(source, start, realSamples, fromBatch, toBatch)) {
      n += table.rows((int) u);
    }
    return n;
  }

  /** Real (not padded) rows of batches {@code [fromBatch, toBatch)}. */
  public long realRows(int fromBatch, int toBatch) {
    checkBatches(fromBatch, toBatch);
    if (table == null) {
      long from = Math.min((long) fromBatch * batchSize, realSamples);
      return Math.min((long) toBatch * batchSize, realSamples) - from;
    }
    return rows(Math.min(fromBatch, realSamples), Math.min(toBatch, realSamples));
  }

  /** The packed batch (an entry of the leg's sequence of batch numbers) that is batch {@code k}. */
  private int unit(int k) {
    return (int) RankEntries.derive(source, start, realSamples, k, k + 1)[0];
  }

  /** Batches delivered before the resume this plan continues from; skip them. */
  public int firstBatch() {
    return firstBatch;
  }

  /** Batches still to deliver: {@code batches() - firstBatch()}. */
  public int remainingBatches() {
    return batches() - firstBatch;
  }

  /** Entries in the sequence, padding included: {@code batches() × batchSize()}, or all rows. */
  public int samples() {
    return table == null ? length : Math.toIntExact(rows(0, batches()));
  }

  /** Entries that are not padding; they come first. */
  public int realSamples() {
    return table == null ? realSamples : Math.toIntExact(realRows(0, batches()));
  }

  /**
   * The dataset index at a position of this rank's sequence. The first call derives and keeps the
   * rank's whole sequence (8 bytes per entry); prefer {@link #indices(int, int)} for a slice.
   */
  public long index(int position) {
    checkPosition(position);
    return all()[position];
  }

  public boolean isPadded(int position) {
    checkPosition(position);
    return position >= realSamples();
  }

  /** Padded entries in batch {@code k}; they are its last ones (a padding batch: all of them). */
  public int paddedIn(int batch) {
    checkBatches(batch, batch + 1);
    if (table != null) {
      return batch < realSamples ? 0 : batchRows(batch);
    }
    int end = (batch + 1) * batchSize;
    return Math.max(0, Math.min(batchSize, end - realSamples));
  }

  /** Batch {@code k}'s dataset indices, a new array. */
  public long[] batch(int k) {
    return indices(k, k + 1);
  }

  /**
   * The indices of batches {@code [fromBatch, toBatch)}, a new array, derived from only the windows
   * of the epoch those batches overlap.
   */
  public long[] indices(int fromBatch, int toBatch) {
    checkBatches(fromBatch, toBatch);
    if (table != null) {
      return expand(RankEntries.derive(source, start, realSamples, fromBatch, toBatch));
    }
    return derive(fromBatch * batchSize, toBatch * batchSize);
  }

  /** The samples of packed batches {@code units}, in order, derived from the epoch's sequence. */
  private long[] expand(long[] units) {
    long n = 0;
    for (long u : units) {
      n += table.rows((int) u);
    }
    long[] out = new long[Math.toIntExact(n)];
    EpochSequence.Cursor cursor = samplesSequence().new Cursor();
    int at = 0;
    for (long u : units) {
      int t = (int) u;
      cursor.copy(table.start(t), table.start(t) + table.rows(t), out, at);
      at += table.rows(t);
    }
    return out;
  }

  /** The epoch's sequence of samples the packed batches were cut from. */
  private EpochSequence samplesSequence() {
    return table.samples();
  }

  /** The identity of batch {@code k}, the same on every retry of the task that produces it. */
  public BatchKey batchKey(int k) {
    checkBatches(k, k + 1);
    return new BatchKey(epoch, leg, rank, k);
  }

  /** The digest of what this rank still delivers: batches {@code [firstBatch(), batches())}. */
  public String digest() {
    return table != null
        ? Digest.of(indices(firstBatch, batches()))
        : Digest.of(derive(firstBatch * batchSize, length));
  }

  /**
   * Which shard positions to read for batches {@code [fromBatch, toBatch)}, and where each lands.
   *
   * @param offsets {@code Manifest.offsets()} of the manifest this plan was made from
   */
  public ReadPlan readPlan(long[] offsets, int fromBatch, int toBatch) {
    checkBatches(fromBatch, toBatch);
    long[] slice = indices(fromBatch, toBatch);
    return ReadPlan.of(offsets, slice, 0, slice.length);
  }

  /**
   * Per source of {@code mixture} (the one this plan was made with), the real (not padded) entries
   * of batches {@code [fromBatch, toBatch)}: what those batches deliver from each source. O(sources
   * × stretches); derives no indices.
   */
  public long[] realBySource(Mixture mixture, int fromBatch, int toBatch) {
    checkBatches(fromBatch, toBatch);
    int from = Math.min(fromBatch * batchSize, realSamples);
    int to = Math.min(toBatch * batchSize, realSamples);
    return source.countBySource(start + from, start + to, mixture);
  }

  int realRemainingAfter(int consumedBatches) {
    return Math.max(0, realSamples - consumedBatches * per());
  }

  /** The epoch's sequence this plan derives its entries from. */
  EpochSequence sequence() {
    return source.epoch();
  }

  /** Appends the real entries after {@code consumedBatches} batches to the rest being built. */
  void appendRealRemaining(int consumedBatches, Segments.Builder rest) {
    int n = realRemainingAfter(consumedBatches);
    source.appendTo(rest, start + realSamples - n, start + realSamples);
  }

  /** Entries {@code [from, to)}: from the whole sequence once kept, else derived. */
  private long[] derive(int from, int to) {
    long[] cached = all;
    return cached != null
        ? Arrays.copyOfRange(cached, from, to)
        : RankEntries.derive(source, start, realSamples, from, to);
  }

  private long[] all() {
    long[] a = all;
    if (a == null) {
      a = table != null ? indices(0, batches()) : derive(0, length);
      all = a;
    }
    return a;
  }

  private void checkBatches(int from, int to) {
    if (from < 0 || to > batches() || from > to) {
      throw new IndexOutOfBoundsException(
          "Invalid batch range ["
              + from
              + ", "
              + to
              + ") for rank "
              + rank
              + " with "
              + batches()
              + " batches");
    }
  }

  private void checkPosition(int position) {
    int entries = samples();
    if (position < 0 || position >= entries) {
      throw new IndexOutOfBoundsException(
          "Invalid position " + position + " for rank " + rank + " with " + entries + " entries");
    }
  }

  @Override
  public String toString() {
    return "RankPlan[epoch "
        + epoch
        + ", leg "
        + leg
        + ", rank "
        + rank
        + ", "
        + batches()
        + " batches of "
        + batchSize
        + ", from batch "
        + firstBatch
        + ", "
        + realSamples
        + " real]";
  }
}
