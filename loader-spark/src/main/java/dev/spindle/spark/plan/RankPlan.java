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
 * <p>Immutable and serializable: safe to share between threads and to ship to executors. Every
 * method that returns an array returns a new one owned by the caller.
 */
public final class RankPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  private final int epoch;
  private final int leg;
  private final int rank;
  private final int batchSize;
  private final long[] indices;
  private final int realSamples;
  private final int firstBatch;

  RankPlan(int epoch, int leg, int rank, int batchSize, long[] indices, int realSamples,
      int firstBatch) {
    this.epoch = epoch;
    this.leg = leg;
    this.rank = rank;
    this.batchSize = batchSize;
    this.indices = indices;
    this.realSamples = realSamples;
    this.firstBatch = firstBatch;
  }

  /** The same plan, with the first {@code consumed} batches marked as already delivered. */
  RankPlan startingAt(int consumed) {
    return new RankPlan(epoch, leg, rank, batchSize, indices, realSamples, consumed);
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
    return indices.length / batchSize;
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
    return indices.length;
  }

  /** Entries that are not padding; they come first. */
  public int realSamples() {
    return realSamples;
  }

  /** The dataset index at a position of this rank's sequence. */
  public long index(int position) {
    return indices[position];
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

  /** The indices of batches {@code [fromBatch, toBatch)}, a new array. */
  public long[] indices(int fromBatch, int toBatch) {
    checkBatches(fromBatch, toBatch);
    return Arrays.copyOfRange(indices, fromBatch * batchSize, toBatch * batchSize);
  }

  /** The identity of batch {@code k}, the same on every retry of the task that produces it. */
  public BatchKey batchKey(int k) {
    checkBatches(k, k + 1);
    return new BatchKey(epoch, leg, rank, k);
  }

  /** The digest of what this rank still delivers: batches {@code [firstBatch(), batches())}. */
  public String digest() {
    return Digest.of(indices, firstBatch * batchSize, indices.length - firstBatch * batchSize);
  }

  /**
   * Which shard positions to read for batches {@code [fromBatch, toBatch)}, and where each lands.
   *
   * @param offsets {@code Manifest.offsets()} of the manifest this plan was made from
   */
  public ReadPlan readPlan(long[] offsets, int fromBatch, int toBatch) {
    checkBatches(fromBatch, toBatch);
    return ReadPlan.of(offsets, indices, fromBatch * batchSize, (toBatch - fromBatch) * batchSize);
  }

  int realRemainingAfter(int consumedBatches) {
    return Math.max(0, realSamples - consumedBatches * batchSize);
  }

  int copyRealRemaining(int consumedBatches, long[] into, int at) {
    int n = realRemainingAfter(consumedBatches);
    System.arraycopy(indices, realSamples - n, into, at, n);
    return n;
  }

  private void checkBatches(int from, int to) {
    if (from < 0 || to > batches() || from > to) {
      throw new IndexOutOfBoundsException(
          "Invalid batch range [" + from + ", " + to + ") for rank " + rank + " with "
              + batches() + " batches");
    }
  }

  private void checkPosition(int position) {
    if (position < 0 || position >= indices.length) {
      throw new IndexOutOfBoundsException(
          "Invalid position " + position + " for rank " + rank + " with " + indices.length
              + " entries");
    }
  }

  @Override
  public String toString() {
    return "RankPlan[epoch " + epoch + ", leg " + leg + ", rank " + rank + ", " + batches()
        + " batches of " + batchSize + ", from batch " + firstBatch + ", " + realSamples
        + " real]";
  }
}
