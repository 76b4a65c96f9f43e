package dev.spindle.spark.feed;

import dev.spindle.spark.metrics.Timeline;
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

  /** What its legs did together, for the report's timeline (spread over the rank's task). */
  Timeline.Counts timelineCounts() {
    long samples = 0, images = 0, bytes = 0, quarantined = 0;
    for (Leg leg : legs) {
      Timeline.Counts c = leg.outcome().timelineCounts();
      samples += c.samples();
      images += c.images();
      bytes += c.bytes();
      quarantined += c.quarantined();
    }
    return new Timeline.Counts(samples, images, bytes, quarantined);
  }

  /** One epoch's leg of the rank. */
  record Leg(int epoch, TaskOutcome outcome) implements Serializable {}
}
