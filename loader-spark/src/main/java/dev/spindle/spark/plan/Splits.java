package dev.spindle.spark.plan;

import java.util.Arrays;

/**
 * Step 2 of a plan: cutting an ordered sequence of samples into equal per-rank parts. Pure; runs on
 * the calling thread.
 */
final class Splits {
  private Splits() {}

  /** The split of a fresh epoch, under the spec's remainder policy; refuses unequal plans. */
  static RankPlan[] fresh(long[] q, PlanSpec spec) {
    int n = q.length;
    int ranks = spec.worldSize();
    int batch = spec.batchSize();
    long round = (long) ranks * batch;
    if (n < round) {
      throw new IllegalArgumentException(String.format(
          "Refused plan: %d samples would give each of %d ranks zero batches of %d"
              + " (the batch size is larger than a rank's share of %d samples;"
              + " at least %d samples are needed)",
          n, ranks, batch, n / ranks, round));
    }
    if (spec.remainder() == Remainder.EXACT && n % round != 0) {
      throw new IllegalArgumentException(String.format(
          "Refused plan: %d samples do not divide into %d ranks × batch size %d = %d per round"
              + " (%d left over) and the remainder policy is EXACT; use DROP_LAST or PAD",
          n, ranks, batch, round, n % round));
    }
    if (spec.remainder() == Remainder.PAD) {
      return padded(q, ranks, batch, spec.epoch(), 0);
    }
    int perRank = spec.freshBatchesPerRank(n) * batch;
    RankPlan[] plans = new RankPlan[ranks];
    for (int r = 0; r < ranks; r++) {
      long[] part = Arrays.copyOfRange(q, r * perRank, (r + 1) * perRank);
      plans[r] = new RankPlan(spec.epoch(), 0, r, batch, part, perRank, 0);
    }
    return plans;
  }

  /**
   * Balanced contiguous shares of {@code q} (the first {@code n mod ranks} ranks hold one more),
   * each padded up to {@code ceil(n / (ranks × batch))} batches by repeating the rank's own first
   * samples, or the first samples of {@code q} for a rank with no share. {@code q} is non-empty.
   */
  static RankPlan[] padded(long[] q, int ranks, int batch, int epoch, int leg) {
    int n = q.length;
    long round = (long) ranks * batch;
    int perRank = (int) ((n + round - 1) / round) * batch;
    int base = n / ranks;
    int extra = n % ranks;
    RankPlan[] plans = new RankPlan[ranks];
    for (int r = 0; r < ranks; r++) {
      int start = r * base + Math.min(r, extra);
      int share = base + (r < extra ? 1 : 0);
      long[] part = new long[perRank];
      System.arraycopy(q, start, part, 0, share);
      for (int j = 0; j < perRank - share; j++) {
        part[share + j] = share > 0 ? q[start + j % share] : q[j % n];
      }
      plans[r] = new RankPlan(epoch, leg, r, batch, part, share, 0);
    }
    return plans;
  }

  /** The real samples not yet delivered, rank by rank, each rank's in its own order. */
  static long[] remaining(RankPlan[] plans, int[] batchesConsumed) {
    long count = 0;
    for (int r = 0; r < plans.length; r++) {
      count += plans[r].realRemainingAfter(batchesConsumed[r]);
    }
    long[] q = new long[(int) count];
    int at = 0;
    for (int r = 0; r < plans.length; r++) {
      at += plans[r].copyRealRemaining(batchesConsumed[r], q, at);
    }
    return q;
  }
}
