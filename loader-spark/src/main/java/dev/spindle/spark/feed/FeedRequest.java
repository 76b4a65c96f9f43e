package dev.spindle.spark.feed;

import dev.spindle.spark.config.Settings;
import dev.spindle.spark.plan.LoaderState;
import java.util.Objects;

/**
 * What one {@code feed} run is asked to do. Plan settings (seed, batch size, remainder policy,
 * shuffle window), partitions, threads and image size come from {@code settings}, where CLI flags
 * put them; on a resume, the ones not set there are taken from the state.
 *
 * @param input the dataset URI
 * @param manifestFile where to cache the manifest, or null for the default next to the data
 * @param worldSize trainer ranks
 * @param epochs run until this many epochs are complete (counting from epoch 0)
 * @param resume the state to continue from, or null to start at epoch 0
 * @param stopAfterBatches stop once every rank got this many batches in this run; 0 = never
 * @param settings the {@code spark.spindle.*} settings, parsed once ({@link Settings})
 */
public record FeedRequest(
    String input,
    String manifestFile,
    int worldSize,
    int epochs,
    LoaderState resume,
    int stopAfterBatches,
    Settings settings) {
  public FeedRequest {
    Objects.requireNonNull(input, "input");
    if (worldSize < 1) {
      throw new IllegalArgumentException("Invalid world size: " + worldSize + " (must be >= 1)");
    }
    if (epochs < 1) {
      throw new IllegalArgumentException("Invalid epochs: " + epochs + " (must be >= 1)");
    }
    if (stopAfterBatches < 0) {
      throw new IllegalArgumentException(
          "Invalid batches to stop after: " + stopAfterBatches + " (must be >= 0)");
    }
    Objects.requireNonNull(settings, "settings");
  }
}
