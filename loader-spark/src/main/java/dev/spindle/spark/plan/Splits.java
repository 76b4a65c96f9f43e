package dev.spindle.spark.plan;

/**
 * Step 2 of a plan: cutting a sequence of samples ({@link Segments}) into equal per-rank parts.
 * Only arithmetic on positions: O(ranks) work, no indices. Pure; runs on the calling thread.
 */
final class Splits {
  /** The most entries one rank's plan holds in an epoch: Java's array limit, with headroom. */
  static final int MAX_PER_RANK = Integer.MAX_VALUE - 8;

  private Splits() {}

  /** The split of a fresh epoch, under the spec's remainder policy; refuses unequal plans. */
  static RankPlan[] fresh(Segments q, PlanSpec spec) {
    long n = q.length();
    int ranks = spec.worldSize();
    int batch = spec.batchSize();
    long round = (long) ranks * batch;
    if (n < round) {
      throw new IllegalArgumentException(
          String.format(
              "Refused plan: %d samples would give each of %d ranks zero batches of %d"
                  + " (the batch size is larger than a rank's share of %d samples;"
                  + " at least %d samples are needed)",
              n, ranks, batch, n / ranks, round));
    }
    if (spec.remainder() == Remainder.EXACT && n % round != 0) {
      throw new IllegalArgumentException(
          String.format(
              "Refused plan: %d samples do not divide into %d ranks × batch size %d = %d per round"
                  + " (%d left over) and the remainder policy is EXACT; use DROP_LAST or PAD",
              n, ranks, batch, round, n % round));
    }
    if (spec.remainder() == Remainder.PAD) {
      return padded(q, ranks, batch, spec.epoch(), 0);
    }
    int perRank = entries((long) spec.freshBatchesPerRank(n) * batch, n, ranks);
    RankPlan[] plans = new RankPlan[ranks];
    for (int r = 0; r < ranks; r++) {
      plans[r] =
          new RankPlan(spec.epoch(), 0, r, batch, q, (long) r * perRank, perRank, perRank, 0);
    }
    return plans;
  }

  /**
   * Balanced contiguous shares of {@code q} (the first {@code n mod ranks} ranks hold one more),
   * each padded up to {@code ceil(n / (ranks × batch))} batches by repeating the rank's own first
   * samples, or the first samples of {@code q} for a rank with no share. {@code q} is non-empty.
   */
  static RankPlan[] padded(Segments q, int ranks, int batch, int epoch, int leg) {
    long n = q.length();
    long round = (long) ranks * batch;
    int perRank = entries((n + round - 1) / round * batch, n, ranks);
    long base = n / ranks;
    long extra = n % ranks;
    RankPlan[] plans = new RankPlan[ranks];
    for (int r = 0; r < ranks; r++) {
      long start = r * base + Math.min(r, extra);
      int share = (int) (base + (r < extra ? 1 : 0));
      plans[r] = new RankPlan(epoch, leg, r, batch, q, start, perRank, share, 0);
    }
    return plans;
  }

  /** A rank's entries, refused beyond what one rank's arrays can hold. */
  private static int entries(long perRank, long samples, int ranks) {
    if (perRank > MAX_PER_RANK) {
      throw new IllegalArgumentException(
          "Refused plan: "
              + samples
              + " samples give each of "
              + ranks
              + " ranks "
              + perRank
              + " entries (at most "
              + MAX_PER_RANK
              + " per rank and epoch); use more ranks");
    }
    return (int) perRank;
  }

  /**
   * The real samples not yet delivered, rank by rank, each rank's in its own order: at most one
   * segment per rank.
   */
  static Segments remaining(EpochSequence epoch, RankPlan[] plans, int[] batchesConsumed) {
    Segments.Builder rest = new Segments.Builder(epoch);
    for (int r = 0; r < plans.length; r++) {
      plans[r].appendRealRemaining(batchesConsumed[r], rest);
    }
    return rest.build();
  }
}
