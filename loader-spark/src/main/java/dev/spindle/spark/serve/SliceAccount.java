package dev.spindle.spark.serve;

import dev.spindle.spark.plan.Digest;
import dev.spindle.spark.plan.RankPlan;

/**
 * A task's account of one slice as its batches are produced: takes them in plan order only, checks
 * each against the plan before it is handed over (whether or not this JVM's consumer still takes
 * it), hashes the indices produced and counts padding, stand-ins and batches not handed over again;
 * at the end, the slice's {@link BatchRun}. When the slice reports the digest of batches before its
 * own ({@link FeedSlice#digestFrom()}), those are derived from the plan and hashed first. Task
 * thread only.
 */
public final class SliceAccount {
  private final FeedSlice slice;
  private final RankPlan rank;
  private final PlannedBatches planned;
  private final Digest digest = new Digest();
  private int next;
  private long padded;
  private long rows;
  private long tokens;
  private long substituted;
  private int notRedelivered;

  public SliceAccount(FeedSlice slice, RankPlan rank, PlannedBatches planned) {
    this.slice = slice;
    this.rank = rank;
    this.planned = planned;
    this.next = slice.fromBatch();
    PlannedBatches.hash(rank, slice.digestFrom(), slice.fromBatch(), digest);
  }

  /** True when the slice's batches are all taken. */
  boolean complete() {
    return next == slice.toBatch();
  }

  /**
   * Takes the slice's next batch: fails, naming it, when it is not the next in plan order or not
   * the planned one. Call before handing it over.
   */
  public void take(FeedBatch batch) {
    if (batch.key().rank() != slice.rank() || batch.key().batch() != next || complete()) {
      throw new IllegalStateException(
          "Batch "
              + batch.key()
              + " arrived out of plan order: the"
              + " task expected "
              + (complete()
                  ? "no more batches of rank " + slice.rank()
                  : "batch " + rank.batchKey(next))
              + " (slice "
              + slice
              + ")");
    }
    long[] indices = planned.check(rank, batch);
    digest.update(indices, 0, indices.length);
    padded += batch.padded();
    rows += indices.length;
    int k = batch.key().batch();
    tokens += rank.packed() && rank.paddedIn(k) == 0 ? rank.batchTokens(k) : 0;
    substituted += batch.substituted().cardinality();
    next++;
  }

  /** The batch just taken was not handed over: this JVM's consumer already had it. */
  void notRedelivered() {
    notRedelivered++;
  }

  /**
   * What the driver learns of the slice; fails, naming the first missing batch, unless complete.
   */
  public BatchRun run() {
    if (!complete()) {
      throw new IllegalStateException(
          "The task produced rank "
              + slice.rank()
              + "'s batches up"
              + " to "
              + rank.batchKey(next)
              + " only, of its slice "
              + slice);
    }
    return new BatchRun(
        rank.batchKey(slice.fromBatch()),
        slice.toBatch(),
        rank.batchSize(),
        padded,
        substituted,
        notRedelivered,
        slice.digestFrom(),
        digest.hex(),
        rows,
        tokens);
  }
}
