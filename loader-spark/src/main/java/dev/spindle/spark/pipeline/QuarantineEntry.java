package dev.spindle.spark.pipeline;

import java.io.Serializable;
import java.util.Objects;

/**
 * One item a stage dropped: the stage, the item's key (from the builder's {@code keyedBy} function,
 * or {@code "item N"} with N the item's position in the source) and why. Serializable, so a {@link
 * PipelineFailure} that carries it can travel from an executor to the driver.
 */
public record QuarantineEntry(String stage, String key, String reason) implements Serializable {
  public QuarantineEntry {
    Objects.requireNonNull(stage, "stage");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(reason, "reason");
  }

  @Override
  public String toString() {
    return stage + " [" + key + "]: " + reason;
  }
}
