package dev.spindle.spark.plan;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestFingerprint;
import java.util.List;

/**
 * Plans of batches packed to a token budget (package documentation, "Token budgets"): the epoch's
 * sequence is packed into batches ({@link BatchTable}), and those batches, one unit each, are
 * split, padded and resumed as samples are without a budget. Pure; caller's thread.
 */
final class Budgets {
  private Budgets() {}

  /** The plan of a fresh epoch under {@code spec}'s budget; refuses mixtures and unequal plans. */
  static EpochPlan create(
      Manifest manifest, ManifestFingerprint fingerprint, PlanSpec spec, Mixture mixture) {
    BatchTable table = table(manifest, spec, mixture);
    checkFresh(table, spec);
    RankPlan[] units = Splits.fresh(Segments.whole(table.units()), spec.unitSpec());
    return new EpochPlan(spec, fingerprint, List.of(), attach(units, table, spec), null);
  }

  /** Epoch {@code spec.epoch()}'s packed batches. */
  static BatchTable table(Manifest manifest, PlanSpec spec, Mixture mixture) {
    TokenBudget budget = spec.budget();
    if (mixture != null) {
      throw new IllegalArgumentException(
          "spark.spindle.batchTokens (--batch-tokens) cannot be used with a mixture"
              + " (spark.spindle.mix, --mix): token budgets pack one source's epoch only");
    }
    long n = manifest.totalSamples();
    if (!budget.attached() || budget.samples() != n) {
      throw new IllegalStateException(
          "The token budget over field '"
              + budget.field()
              + "' has lengths of "
              + budget.samples()
              + " samples, the manifest holds "
              + n);
    }
    EpochSequence epoch =
        EpochSequence.of(manifest, spec.seed(), spec.epoch(), spec.shuffleWindow());
    return BatchTable.pack(epoch, spec.shuffleWindow(), spec.batchSize(), budget);
  }

  /** Each rank's plan of whole batches given the table that says which samples each holds. */
  static RankPlan[] attach(RankPlan[] units, BatchTable table, PlanSpec spec) {
    RankPlan[] out = new RankPlan[units.length];
    for (int r = 0; r < units.length; r++) {
      out[r] = units[r].packed(table, spec.batchSize());
    }
    return out;
  }

  private static void checkFresh(BatchTable table, PlanSpec spec) {
    int u = table.batches();
    int w = spec.worldSize();
    String what =
        String.format(
            "the epoch packs into %d batches (at most %d rows and %d tokens of field '%s' each,"
                + " spark.spindle.batchTokens)",
            u, spec.batchSize(), spec.budget().tokens(), spec.budget().field());
    if (u < w) {
      throw new IllegalArgumentException(
          "Refused plan: " + what + ", fewer than the " + w + " ranks: a rank would get none");
    }
    if (spec.remainder() == Remainder.EXACT && u % w != 0) {
      throw new IllegalArgumentException(
          String.format(
              "Refused plan: %s, which do not divide into %d ranks (%d left over) and the"
                  + " remainder policy is EXACT; use DROP_LAST or PAD",
              what, w, u % w));
    }
  }
}
