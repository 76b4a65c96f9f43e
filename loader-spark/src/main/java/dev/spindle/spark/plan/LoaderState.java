package dev.spindle.spark.plan;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.manifest.ManifestFingerprint;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Where a run of the loader stands: the plan settings, the epoch in progress and, per rank, how
 * many batches of it were consumed. It is a small JSON document ({@link #toJson()}, format in the
 * package documentation) that a trainer saves with its checkpoint and hands back to resume.
 *
 * <p>An epoch normally has one leg. Each resume that changes the world size (or finds ranks at
 * different points) re-splits the rest of the epoch, starting a new leg; earlier legs are kept
 * until the epoch ends, because the new split is defined by them. Immutable; any thread.
 *
 * @param manifest the manifest the numbering comes from
 * @param seed the plan seed
 * @param epoch the epoch in progress (or about to start)
 * @param batchSize samples per batch
 * @param remainder the remainder policy of the epoch's original split
 * @param shuffleWindow samples per shuffle window
 * @param legs the epoch's legs, oldest first; the last one is the current one
 * @param mixture the mixture the epochs draw from, or null for a single source
 * @param budget the token budget batches are packed to, or null for fixed-size batches; one read
 *     from JSON has no lengths until {@link #withBudget} attaches the job's
 */
public record LoaderState(
    ManifestFingerprint manifest,
    long seed,
    int epoch,
    int batchSize,
    Remainder remainder,
    int shuffleWindow,
    List<Leg> legs,
    Mixture mixture,
    TokenBudget budget)
    implements Serializable {

  /**
   * One split of an epoch and how far each of its ranks got.
   *
   * @param worldSize ranks in this split
   * @param batchesConsumed per rank, batches of this split already consumed
   */
  public record Leg(int worldSize, int[] batchesConsumed) implements Serializable {
    public Leg {
      if (worldSize < 1) {
        throw new IllegalArgumentException("Invalid world size: " + worldSize + " (must be >= 1)");
      }
      if (batchesConsumed.length != worldSize) {
        throw new IllegalArgumentException(
            "Invalid batches consumed: "
                + batchesConsumed.length
                + " entries for world size "
                + worldSize);
      }
      for (int c : batchesConsumed) {
        if (c < 0) {
          throw new IllegalArgumentException("Invalid batches consumed: " + c + " (must be >= 0)");
        }
      }
      batchesConsumed = batchesConsumed.clone();
    }

    @Override
    public int[] batchesConsumed() {
      return batchesConsumed.clone();
    }

    int consumed(int rank) {
      return batchesConsumed[rank];
    }

    boolean untouched() {
      return Arrays.stream(batchesConsumed).allMatch(c -> c == 0);
    }

    boolean allEqual() {
      return Arrays.stream(batchesConsumed).allMatch(c -> c == batchesConsumed[0]);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Leg l
          && l.worldSize == worldSize
          && Arrays.equals(l.batchesConsumed, batchesConsumed);
    }

    @Override
    public int hashCode() {
      return 31 * worldSize + Arrays.hashCode(batchesConsumed);
    }

    @Override
    public String toString() {
      return "Leg[worldSize="
          + worldSize
          + ", batchesConsumed="
          + Arrays.toString(batchesConsumed)
          + "]";
    }
  }

  public LoaderState {
    Objects.requireNonNull(manifest, "manifest");
    Objects.requireNonNull(remainder, "remainder");
    // PlanSpec's checks name the bad epoch, batch size or window.
    new PlanSpec(seed, epoch, 1, batchSize, remainder, shuffleWindow);
    legs = List.copyOf(legs);
    if (legs.isEmpty()) {
      throw new IllegalArgumentException("Invalid loader state: no legs");
    }
  }

  /** The state of a run of fixed-size batches. */
  public LoaderState(
      ManifestFingerprint manifest,
      long seed,
      int epoch,
      int batchSize,
      Remainder remainder,
      int shuffleWindow,
      List<Leg> legs,
      Mixture mixture) {
    this(manifest, seed, epoch, batchSize, remainder, shuffleWindow, legs, mixture, null);
  }

  /** The state of a single-source run. */
  public LoaderState(
      ManifestFingerprint manifest,
      long seed,
      int epoch,
      int batchSize,
      Remainder remainder,
      int shuffleWindow,
      List<Leg> legs) {
    this(manifest, seed, epoch, batchSize, remainder, shuffleWindow, legs, null);
  }

  /** The state before the first batch of {@code spec}'s epoch. */
  public static LoaderState initial(Manifest manifest, PlanSpec spec) {
    return initial(ManifestFingerprint.of(manifest), spec, null);
  }

  /**
   * The state before the first batch of {@code spec}'s epoch of a mixture ({@code mixture} null: a
   * single source).
   */
  public static LoaderState initial(Manifest manifest, PlanSpec spec, Mixture mixture) {
    return initial(ManifestFingerprint.of(manifest), spec, mixture);
  }

  static LoaderState initial(ManifestFingerprint manifest, PlanSpec spec, Mixture mixture) {
    return new LoaderState(
        manifest,
        spec.seed(),
        spec.epoch(),
        spec.batchSize(),
        spec.remainder(),
        spec.shuffleWindow(),
        List.of(new Leg(spec.worldSize(), new int[spec.worldSize()])),
        mixture,
        spec.budget());
  }

  /**
   * Refuses a token budget other than this state's (another field or count, or one where the state
   * has none, and the reverse), naming the key: a resumed run must pack batches the same way.
   */
  public void requireBudget(TokenBudget requested) {
    if (!Objects.equals(budget, requested)) {
      throw new IllegalArgumentException(
          "Resume state does not match the requested token budget (spark.spindle.batchTokens,"
              + " --batch-tokens): the state was written for "
              + TokenBudget.describe(budget)
              + ", the run asks for "
              + TokenBudget.describe(requested));
    }
  }

  /**
   * This state with {@code attached} (equal to its own budget, with the samples' lengths) in place
   * of its budget: a state read from JSON knows the budget, not the lengths a plan packs by.
   */
  public LoaderState withBudget(TokenBudget attached) {
    requireBudget(attached);
    return new LoaderState(
        manifest, seed, epoch, batchSize, remainder, shuffleWindow, legs, mixture, attached);
  }

  /**
   * Refuses a mixture other than this state's (or a mixture where the state has none, and the
   * reverse), describing both: a resumed run must draw from the same sources the same way.
   */
  public void requireMixture(Mixture requested) {
    if (!Objects.equals(mixture, requested)) {
      throw new IllegalArgumentException(
          "Resume state does not match the requested mixture: the state was written for "
              + (mixture == null ? "a single source" : "the mixture " + mixture.describe())
              + ", the run asks for "
              + (requested == null ? "a single source" : "the mixture " + requested.describe()));
    }
  }

  /** The current leg's world size. */
  public int worldSize() {
    return current().worldSize();
  }

  /** The current leg's batches consumed, per rank; a new array. */
  public int[] batchesConsumed() {
    return current().batchesConsumed();
  }

  /** The settings of the current epoch and leg. */
  public PlanSpec spec() {
    return new PlanSpec(seed, epoch, worldSize(), batchSize, remainder, shuffleWindow, budget);
  }

  /**
   * Refuses settings that differ from this state's, naming each mismatch. The epoch and world size
   * are not compared: the state says where to continue, and the world size may change.
   */
  public void requireSettings(PlanSpec requested) {
    List<String> mismatches = new ArrayList<>();
    mismatch(mismatches, "seed", seed, requested.seed());
    mismatch(mismatches, "batch size", batchSize, requested.batchSize());
    mismatch(mismatches, "remainder policy", remainder, requested.remainder());
    mismatch(mismatches, "shuffle window", shuffleWindow, requested.shuffleWindow());
    if (!mismatches.isEmpty()) {
      throw new IllegalArgumentException(
          "Resume state does not match the requested settings: " + String.join("; ", mismatches));
    }
  }

  /**
   * The plan that continues exactly where this state stands, for {@code worldSize} ranks. Refuses a
   * manifest other than the one the state was written for. See the package documentation, "Resume",
   * for what is delivered.
   */
  public EpochPlan resume(Manifest manifest, int worldSize) {
    ManifestFingerprint actual = ManifestFingerprint.of(manifest);
    if (!actual.sha256().equals(this.manifest.sha256())) {
      throw new IllegalArgumentException(
          "Resume state is for a different manifest: the state was"
              + " written for "
              + this.manifest.describe()
              + ", the input is "
              + actual.describe());
    }
    return Resumes.plan(this, manifest, actual, worldSize);
  }

  /** This state as its JSON document. */
  public String toJson() {
    return LoaderStateJson.write(this);
  }

  /** Reads a state written by {@link #toJson()}; refuses malformed documents, naming the field. */
  public static LoaderState fromJson(String json) {
    return LoaderStateJson.read(json);
  }

  Leg current() {
    return legs.get(legs.size() - 1);
  }

  private static void mismatch(List<String> out, String what, Object state, Object requested) {
    if (!state.equals(requested)) {
      out.add(what + " is " + state + " in the state but " + requested + " was requested");
    }
  }
}
