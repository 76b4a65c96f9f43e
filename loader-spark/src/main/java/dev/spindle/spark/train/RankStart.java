package dev.spindle.spark.train;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.plan.RankPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where one rank of a {@code train} run starts: the plan of its epoch's leg, the batch it starts
 * from, and the state its trainer resumes with. Every rank's leg of an epoch is the same plan, the
 * one its start state gives (the run's start state for the run's first epoch, the epoch's initial
 * state for later ones); a rank restarted from the state its trainer saved continues that plan from
 * its own count of batches consumed, whatever the other ranks' counts in that document (they are as
 * they were when the leg began): resuming the document itself would re-split the rest of the epoch
 * as for a new world size.
 *
 * @param plan the leg's plan
 * @param position the rank's first batch to serve
 * @param trainerState the loader state JSON the trainer resumes with ({@code SPINDLE_STATE})
 */
record RankStart(EpochPlan plan, int position, String trainerState) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * @param saved the state the rank's trainer saved last, or null if it saved none (a first start)
   * @throws IllegalArgumentException if {@code saved} is of another plan than this run's
   */
  static RankStart of(int rank, int world, TrainInputs in, String saved) {
    return of(rank, new Legs(in, world), saved);
  }

  /** {@link #of(int, int, TrainInputs, String)}, with the legs' plans from {@code legs}. */
  static RankStart of(int rank, Legs legs, String saved) {
    if (saved == null) {
      EpochPlan plan = legs.first();
      return new RankStart(plan, plan.rank(rank).firstBatch(), plan.stateAtStart().toJson());
    }
    LoaderState rankState = LoaderState.fromJson(saved);
    EpochPlan plan = legs.of(rankState.epoch());
    List<String> differing = differences(saved, plan.stateAtStart().toJson());
    if (!differing.isEmpty()) {
      throw new IllegalArgumentException(
          "Rank "
              + rank
              + "'s saved state (epoch "
              + rankState.epoch()
              + ") is of another plan than this run's: "
              + String.join(", ", differing)
              + " differ (spark.spindle.train.stateDir holds another run's states?)");
    }
    int position = rankState.batchesConsumed()[rank];
    if (position < plan.rank(rank).firstBatch() || position > plan.batchesPerRank()) {
      throw new IllegalArgumentException(
          "Rank "
              + rank
              + "'s saved state (epoch "
              + rankState.epoch()
              + ", "
              + position
              + " batches consumed) does not continue this"
              + " run's plan, whose rank "
              + rank
              + " has batches "
              + plan.rank(rank).firstBatch()
              + ".."
              + plan.batchesPerRank()
              + " (spark.spindle.train.stateDir holds another run's"
              + " states?)");
    }
    return new RankStart(plan, position, saved);
  }

  /**
   * The fields of loader state {@code a} that differ from {@code b}'s, the current leg's batch
   * counts aside (what the bridge compares as the plan's identity).
   */
  private static List<String> differences(String a, String b) {
    try {
      ObjectNode x = (ObjectNode) JSON.readTree(a);
      ObjectNode y = (ObjectNode) JSON.readTree(b);
      x.remove("batchesConsumed");
      y.remove("batchesConsumed");
      List<String> out = new ArrayList<>();
      Set<String> names = new TreeSet<>();
      x.fieldNames().forEachRemaining(names::add);
      y.fieldNames().forEachRemaining(names::add);
      for (String n : names) {
        if (!java.util.Objects.equals(x.get(n), y.get(n))) {
          out.add("'" + n + "' (" + x.get(n) + " vs " + y.get(n) + ")");
        }
      }
      return out;
    } catch (JsonProcessingException | ClassCastException e) {
      throw new IllegalArgumentException("Malformed loader state: " + e.getMessage(), e);
    }
  }

  /**
   * Batches rank {@code rank} has consumed since the run began, by the state its trainer saved last
   * (0 without one): what a restarted run no longer has to deliver to it, counted as {@link
   * TrainJob}'s total counts the run's rows (the rest of the first epoch's leg, then whole epochs).
   */
  static long batchesSinceRunStart(int rank, int world, TrainInputs in, String saved) {
    return batchesSinceRunStart(rank, new Legs(in, world), saved);
  }

  /**
   * {@link #batchesSinceRunStart(int, int, TrainInputs, String)}, with the legs' plans from {@code
   * legs}: the driver counts every rank's with one {@code Legs}, so each epoch is planned once, not
   * twice per rank.
   */
  static long batchesSinceRunStart(int rank, Legs legs, String saved) {
    return legs.between(rank, legs.start(rank), legs.at(rank, saved)).batches();
  }

  /**
   * A rank's place in a run: batches {@code [0, batch)} of epoch {@code epoch}'s leg consumed (the
   * end of an epoch and the start of the next are the same place).
   */
  record Point(int epoch, int batch) {}

  /** Consecutive batches of one rank, and the samples among them that are not padding. */
  record Span(long batches, long realSamples) {}

  /**
   * The plans of one run's legs, by the epoch of the state a rank resumes from, each made once
   * (O(shards + ranks) each). The caller's thread.
   */
  static final class Legs {
    private final TrainInputs in;
    private final int world;
    private final LoaderState runStart;
    private final Map<Integer, EpochPlan> plans = new HashMap<>();

    Legs(TrainInputs in, int world) {
      this.in = in;
      this.world = world;
      this.runStart = in.start();
    }

    /** The plan the run starts with. */
    EpochPlan first() {
      return of(runStart.epoch());
    }

    /** Where rank {@code rank} starts the run. */
    Point start(int rank) {
      return new Point(runStart.epoch(), first().rank(rank).firstBatch());
    }

    /** Where rank {@code rank} ends the run: the last epoch's last batch consumed. */
    Point end(int rank) {
      int last = Math.max(runStart.epoch(), in.endEpoch() - 1);
      return new Point(last, of(last).batchesPerRank());
    }

    /**
     * Where a rank whose trainer saved {@code saved} (a loader state JSON; null: none, the run's
     * start) stands.
     *
     * @throws IllegalArgumentException if {@code saved} is of another plan than this run's
     */
    Point at(int rank, String saved) {
      if (saved == null) {
        return start(rank);
      }
      RankStart s = RankStart.of(rank, this, saved);
      return new Point(s.plan().epoch(), s.position());
    }

    /**
     * Rank {@code rank}'s batches from {@code from} to {@code to} (none when {@code to} is not
     * after {@code from}), and the samples among them that are not padding.
     */
    Span between(int rank, Point from, Point to) {
      long batches = 0;
      long real = 0;
      for (int e = from.epoch(); e <= to.epoch(); e++) {
        EpochPlan plan = of(e);
        RankPlan r = plan.rank(rank);
        long lo = e == from.epoch() ? from.batch() : r.firstBatch();
        long hi = e == to.epoch() ? to.batch() : plan.batchesPerRank();
        if (hi > lo) {
          batches += hi - lo;
          real += r.realRows((int) lo, (int) hi); // a token budget's batches vary in rows
        }
      }
      return new Span(batches, real);
    }

    /**
     * The leg of a rank whose saved state is at {@code epoch}: the run's start state for the run's
     * first epoch, the epoch's initial state for later ones.
     */
    EpochPlan of(int epoch) {
      return plans.computeIfAbsent(
          epoch,
          e ->
              (e == runStart.epoch()
                      ? runStart
                      : LoaderState.initial(
                          in.manifest(), runStart.spec().withEpoch(e), runStart.mixture()))
                  .resume(in.manifest(), world));
    }
  }
}
