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
    return new RankPlan(epoch, leg, rank, batchSize, source, start, length, realSamples, consumed);
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

  public int batchSize() {
    return batchSize;
  }

  /** All batches of this rank in this leg, delivered or not; equal on every rank. */
  public int batches() {
    return length / batchSize;
  }

  /** Batches delivered before the resume this plan continues from; skip them. */
  public int firstBatch() {
    return firstBatch;
  }

  /** Batches still to deliver: {@code batches() - firstBatch()}. */
  public int remainingBatches() {
    return batches() - firstBatch;
  }

  /** Entries in the sequence, padding included: {@code batches() × batchSize()}. */
  public int samples() {
    return length;
  }

  /** Entries that are not padding; they come first. */
  public int realSamples() {
    return realSamples;
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
    return position >= realSamples;
  }

  /** Padded entries in batch {@code k}; they are its last ones. */
  public int paddedIn(int batch) {
    checkBatches(batch, batch + 1);
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
    return derive(fromBatch * batchSize, toBatch * batchSize);
  }

  /** The identity of batch {@code k}, the same on every retry of the task that produces it. */
  public BatchKey batchKey(int k) {
    checkBatches(k, k + 1);
    return new BatchKey(epoch, leg, rank, k);
  }

  /** The digest of what this rank still delivers: batches {@code [firstBatch(), batches())}. */
  public String digest() {
    return Digest.of(derive(firstBatch * batchSize, length));
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
    return Math.max(0, realSamples - consumedBatches * batchSize);
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
      a = derive(0, length);
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
    if (position < 0 || position >= length) {
      throw new IndexOutOfBoundsException(
          "Invalid position " + position + " for rank " + rank + " with " + length + " entries");
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
