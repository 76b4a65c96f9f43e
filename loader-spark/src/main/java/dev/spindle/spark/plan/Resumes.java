package dev.spindle.spark.plan;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestFingerprint;
import java.util.List;

/** Rebuilds an interrupted epoch from a loader state and plans its rest. Pure; caller's thread. */
final class Resumes {
  private Resumes() {}

  static EpochPlan plan(
      LoaderState state, Manifest manifest, ManifestFingerprint fingerprint, int worldSize) {
    PlanSpec next = state.spec().withWorldSize(worldSize);
    List<LoaderState.Leg> legs = state.legs();
    if (state.current().untouched()) {
      // Nothing consumed since the last split: plan as if that split had not been made.
      legs = legs.subList(0, legs.size() - 1);
    }
    Mixture mix = state.mixture();
    if (legs.isEmpty()) {
      return EpochPlan.create(manifest, fingerprint, next, mix);
    }
    // With a token budget the split, its legs and the rest are of whole packed batches (unit 1).
    BatchTable table = state.budget() == null ? null : Budgets.table(manifest, state.spec(), mix);
    EpochSequence epoch =
        table != null
            ? table.units()
            : EpochSequence.of(manifest, state.seed(), state.epoch(), state.shuffleWindow(), mix);
    int unit = table != null ? 1 : state.batchSize();
    RankPlan[] split = replay(state, epoch, legs, unit);
    LoaderState.Leg last = legs.get(legs.size() - 1);
    Segments rest = Splits.remaining(epoch, split, last.batchesConsumed());
    if (rest.length() == 0) {
      return EpochPlan.create(manifest, fingerprint, next.withEpoch(state.epoch() + 1), mix);
    }
    if (worldSize == last.worldSize() && last.allEqual()) {
      RankPlan[] tail = new RankPlan[split.length];
      for (int r = 0; r < split.length; r++) {
        tail[r] = split[r].startingAt(last.consumed(r));
      }
      return new EpochPlan(
          next, fingerprint, legs.subList(0, legs.size() - 1), packed(tail, table, next), mix);
    }
    RankPlan[] resplit = Splits.padded(rest, worldSize, unit, state.epoch(), legs.size());
    return new EpochPlan(next, fingerprint, legs, packed(resplit, table, next), mix);
  }

  private static RankPlan[] packed(RankPlan[] units, BatchTable table, PlanSpec spec) {
    return table == null ? units : Budgets.attach(units, table, spec);
  }

  /** The split of the last of {@code legs}, recomputed from the epoch's original order. */
  private static RankPlan[] replay(
      LoaderState state, EpochSequence epoch, List<LoaderState.Leg> legs, int unit) {
    PlanSpec original = state.spec().withWorldSize(legs.get(0).worldSize());
    if (original.budget() != null) {
      original = original.unitSpec();
    }
    RankPlan[] split = Splits.fresh(Segments.whole(epoch), original);
    for (int k = 1; k < legs.size(); k++) {
      Segments rest = Splits.remaining(epoch, split, legs.get(k - 1).batchesConsumed());
      split = Splits.padded(rest, legs.get(k).worldSize(), unit, state.epoch(), k);
    }
    checkWithin(split, legs.get(legs.size() - 1));
    return split;
  }

  private static void checkWithin(RankPlan[] split, LoaderState.Leg leg) {
    if (leg.worldSize() != split.length) {
      throw new IllegalArgumentException(
          "Invalid loader state: leg has world size "
              + leg.worldSize()
              + " but its split has "
              + split.length
              + " ranks");
    }
    for (int r = 0; r < split.length; r++) {
      if (leg.consumed(r) > split[r].batches()) {
        throw new IllegalArgumentException(
            "Invalid loader state: rank "
                + r
                + " consumed "
                + leg.consumed(r)
                + " batches of a split with "
                + split[r].batches()
                + " per rank");
      }
    }
  }
}
