package dev.spindle.spark.plan;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestFingerprint;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The plan of one epoch for every rank: {@code f(manifest, seed, epoch, world size, batch size,
 * remainder policy, shuffle window)}, computed on the driver before any work starts and identical
 * on every JVM. Every rank has the same number of full batches; every sample of the epoch is in
 * exactly one rank's real entries (minus the dropped remainder under {@link Remainder#DROP_LAST}).
 * See the package documentation for the algorithm.
 *
 * <p>Immutable and serializable; safe to share between threads and to broadcast to executors. A
 * plan made by {@link LoaderState#resume} also remembers how the epoch was split before, so that
 * {@link #stateAfter(int[])} can describe progress across resumes.
 */
public final class EpochPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  private final PlanSpec spec;
  private final ManifestFingerprint manifest;
  private final List<LoaderState.Leg> earlierLegs;
  private final RankPlan[] ranks;
  private final Mixture mixture;

  EpochPlan(
      PlanSpec spec,
      ManifestFingerprint manifest,
      List<LoaderState.Leg> earlierLegs,
      RankPlan[] ranks,
      Mixture mixture) {
    this.spec = spec;
    this.manifest = manifest;
    this.earlierLegs = List.copyOf(earlierLegs);
    this.ranks = ranks;
    this.mixture = mixture;
  }

  /**
   * The plan of a fresh epoch. Refuses, with the numbers, a plan that would give a rank zero
   * batches, and one that is not equal without padding under {@link Remainder#EXACT}.
   */
  public static EpochPlan create(Manifest manifest, PlanSpec spec) {
    return create(manifest, ManifestFingerprint.of(manifest), spec);
  }

  /**
   * The plan of a fresh epoch of a mixture over {@code manifest}, the sources' manifests laid end
   * to end (package documentation, "Mixtures"); {@code mixture} null is {@link #create(Manifest,
   * PlanSpec)}.
   */
  public static EpochPlan create(Manifest manifest, PlanSpec spec, Mixture mixture) {
    return create(manifest, ManifestFingerprint.of(manifest), spec, mixture);
  }

  static EpochPlan create(
      Manifest manifest, ManifestFingerprint fingerprint, PlanSpec spec, Mixture mixture) {
    if (spec.budget() != null) {
      return Budgets.create(manifest, fingerprint, spec, mixture);
    }
    Segments epoch =
        Segments.whole(
            EpochSequence.of(manifest, spec.seed(), spec.epoch(), spec.shuffleWindow(), mixture));
    return new EpochPlan(spec, fingerprint, List.of(), Splits.fresh(epoch, spec), mixture);
  }

  static EpochPlan create(Manifest manifest, ManifestFingerprint fingerprint, PlanSpec spec) {
    return create(manifest, fingerprint, spec, null);
  }

  /** The mixture this plan draws from, or null for a single source. */
  public Mixture mixture() {
    return mixture;
  }

  /** The settings this plan was made with; its world size is this leg's. */
  public PlanSpec spec() {
    return spec;
  }

  public ManifestFingerprint manifest() {
    return manifest;
  }

  public int epoch() {
    return spec.epoch();
  }

  public int worldSize() {
    return ranks.length;
  }

  /** 0 for a fresh epoch; k after k resumes that re-split it. */
  public int leg() {
    return earlierLegs.size();
  }

  /** Batches per rank in this leg, delivered or not; the same for every rank. */
  public int batchesPerRank() {
    return ranks[0].batches();
  }

  public RankPlan rank(int rank) {
    if (rank < 0 || rank >= ranks.length) {
      throw new IndexOutOfBoundsException(
          "Invalid rank: " + rank + " (world size " + ranks.length + ")");
    }
    return ranks[rank];
  }

  public List<RankPlan> ranks() {
    return List.of(ranks);
  }

  /** Real (not padded) samples this plan still delivers, over all ranks. */
  public long samplesToDeliver() {
    long n = 0;
    for (RankPlan r : ranks) {
      n += r.realRows(r.firstBatch(), r.batches());
    }
    return n;
  }

  /**
   * The loader state once every rank {@code r} has consumed its first {@code batchesConsumed[r]}
   * batches of this leg (counting those skipped by a resume). When every rank has consumed all of
   * them, the state is the start of the next epoch, with this plan's world size.
   */
  public LoaderState stateAfter(int[] batchesConsumed) {
    checkConsumed(batchesConsumed);
    boolean finished = true;
    for (int c : batchesConsumed) {
      finished &= c == batchesPerRank();
    }
    if (finished) {
      return LoaderState.initial(manifest, spec.withEpoch(spec.epoch() + 1), mixture);
    }
    List<LoaderState.Leg> legs = new ArrayList<>(earlierLegs);
    legs.add(new LoaderState.Leg(ranks.length, batchesConsumed));
    return new LoaderState(
        manifest,
        spec.seed(),
        spec.epoch(),
        spec.batchSize(),
        spec.remainder(),
        spec.shuffleWindow(),
        legs,
        mixture,
        spec.budget());
  }

  /** The state this plan starts from: every rank at its {@link RankPlan#firstBatch()}. */
  public LoaderState stateAtStart() {
    int[] consumed = new int[ranks.length];
    for (int r = 0; r < ranks.length; r++) {
      consumed[r] = ranks[r].firstBatch();
    }
    return stateAfter(consumed);
  }

  /** The state after this epoch: the start of the next one. */
  public LoaderState stateAtEnd() {
    int[] all = new int[ranks.length];
    Arrays.fill(all, batchesPerRank());
    return stateAfter(all);
  }

  private void checkConsumed(int[] batchesConsumed) {
    if (batchesConsumed.length != ranks.length) {
      throw new IllegalArgumentException(
          "Invalid batches consumed: "
              + batchesConsumed.length
              + " ranks given, the plan has "
              + ranks.length);
    }
    for (int r = 0; r < ranks.length; r++) {
      int c = batchesConsumed[r];
      if (c < ranks[r].firstBatch() || c > batchesPerRank()) {
        throw new IllegalArgumentException(
            "Invalid batches consumed by rank "
                + r
                + ": "
                + c
                + " (must be between "
                + ranks[r].firstBatch()
                + " and "
                + batchesPerRank()
                + ")");
      }
    }
  }

  @Override
  public String toString() {
    return "EpochPlan[epoch "
        + spec.epoch()
        + ", leg "
        + leg()
        + ", "
        + ranks.length
        + " ranks × "
        + batchesPerRank()
        + " batches of "
        + spec.batchSize()
        + "]";
  }
}
