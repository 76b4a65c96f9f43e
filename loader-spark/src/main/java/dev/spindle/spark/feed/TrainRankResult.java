package dev.spindle.spark.feed;

import java.io.Serializable;
import java.util.List;

/**
 * What one rank task of a {@code train} run reports when its trainer finished: how it ended, what
 * each epoch's leg served, and the loader state its trainer saved last.
 *
 * @param exit how the trainer ended (kind {@code ok})
 * @param legs the legs this attempt served, one per epoch, in order
 * @param finalState the trainer's last saved loader state JSON, or null if it saved none
 */
record TrainRankResult(TrainerExit exit, List<Leg> legs, String finalState)
    implements Serializable {
  TrainRankResult {
    legs = List.copyOf(legs);
  }

  /** One epoch's leg of the rank. */
  record Leg(int epoch, TaskOutcome outcome) implements Serializable {}
}
