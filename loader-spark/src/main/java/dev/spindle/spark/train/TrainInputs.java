package dev.spindle.spark.train;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.plan.LoaderState;
import dev.spindle.spark.plan.TokenBudget;
import java.io.Serializable;

/**
 * What every rank task of a {@code train} run reads, broadcast once: the manifest, the state the
 * run starts from and the epoch it ends before. Each task plans its own epochs from them (one
 * epoch's plan at a time: plans are a pure function of the state and the manifest), so the driver
 * never ships a plan per epoch to a task that lives for every epoch. With a token budget ({@code
 * spark.spindle.batchTokens}) the budget travels too, with every sample's length (4 bytes a
 * sample): the state's JSON names the budget, not the lengths its plans pack by.
 */
record TrainInputs(
    Manifest manifest, long[] offsets, String startState, int endEpoch, TokenBudget budget)
    implements Serializable {
  /** The inputs of a run of fixed-size batches starting from the state {@code startState}. */
  static TrainInputs of(Manifest manifest, String startState, int endEpoch) {
    return new TrainInputs(manifest, manifest.offsets(), startState, endEpoch, null);
  }

  static TrainInputs of(Manifest manifest, LoaderState start, int endEpoch) {
    return new TrainInputs(manifest, manifest.offsets(), start.toJson(), endEpoch, start.budget());
  }

  /** The state the run starts from, with the budget's lengths attached. */
  LoaderState start() {
    LoaderState s = LoaderState.fromJson(startState);
    return budget == null ? s : s.withBudget(budget);
  }
}
