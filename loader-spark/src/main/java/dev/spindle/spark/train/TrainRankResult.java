package dev.spindle.spark.train;

import dev.spindle.spark.metrics.Timeline;
import dev.spindle.spark.serve.TaskOutcome;
import java.io.Serializable;
import java.util.List;

/**
 * What one rank task of a {@code train} run reports when its trainer finished, failed or was
 * stopped: how it ended, what each epoch's leg served, the loader state its trainer saved last and
 * how long its steps took.
 *
 * @param exit how the trainer ended
 * @param legs the legs this attempt served to their end, one per epoch, in order
 * @param finalState the trainer's last saved loader state JSON, or null if it saved none
 * @param steps the batches its trainer took in those legs
 * @param busyNanos the time its trainer spent on them: from its hello to each leg's end, less its
 *     waits for batches (its start, before the hello, left out)
 */
record TrainRankResult(
    TrainerExit exit, List<Leg> legs, String finalState, long steps, long busyNanos)
    implements Serializable {
  TrainRankResult {
    legs = List.copyOf(legs);
  }

  /** Mean seconds per step (the trainer's time with a batch, between its requests), or null. */
  Double stepSeconds() {
    return steps == 0 ? null : busyNanos / 1e9 / steps;
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
