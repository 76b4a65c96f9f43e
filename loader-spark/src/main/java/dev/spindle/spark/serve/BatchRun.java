package dev.spindle.spark.serve;

import dev.spindle.spark.plan.BatchKey;
import java.io.Serializable;

/**
 * What a task reports to the driver about one run of consecutive batches of one rank that it
 * produced, in plan order: their identities (a range of {@link BatchKey}s), counts and one digest,
 * never their indices, so a task's result has the same size whatever its batches hold. The task
 * checked every batch of the run against the plan before handing it over (a batch that is not the
 * planned one fails the task, naming it), and hashed the indices it produced.
 *
 * @param first the key of the run's first batch
 * @param toBatch the batch after its last
 * @param batchSize rows per batch (with a token budget, the most a batch may hold)
 * @param padded padded rows in the run
 * @param substituted rows standing in for quarantined samples
 * @param notRedelivered batches of the run that this JVM's consumer already had (an earlier
 *     attempt, failed or speculative, handed them over) and that were not handed over again
 * @param digestFrom the batch the digest starts at: {@code first.batch()}, or the rank's first
 *     batch of the run when this run ends the rank's share and began after it (see {@link
 *     FeedSlice#digestFrom()}); the task derived the planned batches before its own to hash them
 * @param digest the {@link dev.spindle.spark.plan.Digest} of the rank's indices of batches {@code
 *     [digestFrom, toBatch)}, in plan order
 * @param rowCount rows of the run's batches, padded ones included ({@code batches() × batchSize}
 *     unless a token budget packs them)
 * @param tokens under a token budget, the tokens of the run's real (not padding) batches; else 0
 */
public record BatchRun(
    BatchKey first,
    int toBatch,
    int batchSize,
    long padded,
    long substituted,
    int notRedelivered,
    int digestFrom,
    String digest,
    long rowCount,
    long tokens)
    implements Serializable {

  /** A run of batches of {@code batchSize} rows each. */
  public BatchRun(
      BatchKey first,
      int toBatch,
      int batchSize,
      long padded,
      long substituted,
      int notRedelivered,
      int digestFrom,
      String digest) {
    this(
        first,
        toBatch,
        batchSize,
        padded,
        substituted,
        notRedelivered,
        digestFrom,
        digest,
        (long) (toBatch - first.batch()) * batchSize,
        0);
  }

  public int rank() {
    return first.rank();
  }

  public int fromBatch() {
    return first.batch();
  }

  public int batches() {
    return toBatch - first.batch();
  }

  public long rows() {
    return rowCount;
  }

  /**
   * Rows handed over to this JVM's consumer by this attempt (exact for batches of one size; under a
   * token budget, in proportion to the batches handed over).
   */
  long deliveredRows() {
    return batches() == 0 ? 0 : rowCount * (batches() - notRedelivered) / batches();
  }

  /** The key of batch {@code k} of the run's rank and leg. */
  public BatchKey key(int k) {
    return new BatchKey(first.epoch(), first.leg(), first.rank(), k);
  }

  /** {@code e0/l0/r1/b3..b5}: the run's keys, for messages. */
  public String describe() {
    return first + (batches() > 1 ? "..b" + (toBatch - 1) : "");
  }
}
