package dev.spindle.spark.train;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Where every rank of an attempt of a {@code train} run starts: the latest step that every rank has
 * a checkpoint of ({@code spindle_bridge.checkpoint}, {@link CheckpointRecord}), or else the run's
 * start. A step is a count of batches since the run's start, the same on every rank of a DDP run
 * (ranks advance in lockstep from equal starts), so one step is one consistent point: each rank's
 * model, optimizer and data resume there together, and the final model is the one an uninterrupted
 * run trains. A rank keeps its two latest checkpoints, so a rank that died before it saved the step
 * another rank just saved still has one in common with it (the one before). Without a checkpoint on
 * every rank (a script that saves none, or on one rank only) or without a step in common, every
 * rank restarts from the run's start with a fresh model: resuming the data where a trainer left it
 * would leave the batches before that out of the restarted model. Driver thread; immutable.
 *
 * @param step the batches per rank since the run's start at which the ranks start (0: the start)
 * @param ranks per rank, the loader state it starts from and the checkpoint its trainer loads
 * @param why for a start from the run's start in a run whose trainers got further: why no
 *     checkpoint could be used (null otherwise)
 */
record RestartPoint(long step, List<Rank> ranks, String why) implements Serializable {
  RestartPoint {
    ranks = List.copyOf(ranks);
  }

  /**
   * One rank's start.
   *
   * @param state the loader state JSON it resumes from ({@code SPINDLE_STATE}), null for the run's
   *     start
   * @param checkpoint the checkpoint file its trainer loads ({@code SPINDLE_CHECKPOINT}), null for
   *     none (a fresh model)
   */
  record Rank(String state, String checkpoint) implements Serializable {}

  /** Every rank from the run's start, for {@code why} (null: nothing to say). */
  static RestartPoint runStart(int world, String why) {
    return new RestartPoint(0, Collections.nCopies(world, new Rank(null, null)), why);
  }

  boolean fromCheckpoints() {
    return ranks.get(0).checkpoint() != null;
  }

  /**
   * The point every rank of the next attempt starts from, by the checkpoints the ranks' trainers
   * recorded in {@code store}.
   *
   * @throws IllegalArgumentException if a record is malformed or of another run's plan, naming the
   *     store and the rank
   */
  static RestartPoint choose(TrainStateStore store, RankStart.Legs legs, int world)
      throws IOException {
    List<Map<Long, CheckpointRecord.Entry>> byStep = new ArrayList<>();
    List<Integer> without = new ArrayList<>();
    for (int r = 0; r < world; r++) {
      Map<Long, CheckpointRecord.Entry> steps = steps(store, legs, r);
      byStep.add(steps);
      if (steps.isEmpty()) {
        without.add(r);
      }
    }
    boolean progressed = anyProgress(store, legs, world);
    if (without.size() == world) {
      return runStart(
          world, progressed ? "no rank saved a checkpoint (spindle_bridge.checkpoint.save)" : null);
    }
    if (!without.isEmpty()) {
      return runStart(
          world,
          "rank(s) "
              + join(without)
              + " saved no checkpoint (spindle_bridge.checkpoint.save, called on every rank:"
              + " each rank's checkpoint holds its own loader state)");
    }
    TreeSet<Long> common = new TreeSet<>(byStep.get(0).keySet());
    byStep.forEach(s -> common.retainAll(s.keySet()));
    if (common.isEmpty()) {
      return runStart(
          world,
          "the ranks' checkpoints have no step in common ("
              + describe(byStep)
              + "; save at the same steps on every rank)");
    }
    long step = common.last();
    List<Rank> ranks = new ArrayList<>();
    for (Map<Long, CheckpointRecord.Entry> s : byStep) {
      CheckpointRecord.Entry e = s.get(step);
      ranks.add(new Rank(e.state(), e.file()));
    }
    return new RestartPoint(step, ranks, null);
  }

  /** Rank {@code rank}'s checkpoints by step, the newest file first for a step saved twice. */
  private static Map<Long, CheckpointRecord.Entry> steps(
      TrainStateStore store, RankStart.Legs legs, int rank) throws IOException {
    Map<Long, CheckpointRecord.Entry> steps = new LinkedHashMap<>();
    String json = store.checkpoint(rank).orElse(null);
    if (json == null) {
      return steps;
    }
    try {
      for (CheckpointRecord.Entry e : CheckpointRecord.fromJson(json).checkpoints()) {
        steps.putIfAbsent(RankStart.batchesSinceRunStart(rank, legs, e.state()), e);
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Rank "
              + rank
              + "'s checkpoint record in "
              + store.location()
              + " (rank-"
              + rank
              + ".checkpoint.json) cannot be used: "
              + e.getMessage(),
          e);
    }
    return steps;
  }

  /** Whether any rank's trainer got past the run's start (its loader state says so). */
  private static boolean anyProgress(TrainStateStore store, RankStart.Legs legs, int world)
      throws IOException {
    for (int r = 0; r < world; r++) {
      String state = store.state(r).orElse(null);
      if (state != null && RankStart.batchesSinceRunStart(r, legs, state) > 0) {
        return true;
      }
    }
    return false;
  }

  private static String describe(List<Map<Long, CheckpointRecord.Entry>> byStep) {
    List<String> parts = new ArrayList<>();
    for (int r = 0; r < byStep.size(); r++) {
      parts.add("rank " + r + " at step(s) " + join(new ArrayList<>(byStep.get(r).keySet())));
    }
    return String.join(", ", parts);
  }

  private static String join(List<? extends Number> values) {
    return values.stream().map(String::valueOf).collect(Collectors.joining(", "));
  }
}
