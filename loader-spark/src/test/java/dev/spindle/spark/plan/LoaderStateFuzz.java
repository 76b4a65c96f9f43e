package dev.spindle.spark.plan;

import dev.spindle.spark.fuzz.FuzzTarget;
import java.nio.charset.StandardCharsets;

/**
 * Fuzz target of the loader-state reader ({@link LoaderState#fromJson}): the input is a state file
 * a trainer wrote (or anyone could). The property: it returns a state or throws {@link
 * IllegalArgumentException} naming the field (its documented refusal), and a state it accepts
 * writes back to JSON that reads as the same state.
 */
public final class LoaderStateFuzz {
  private LoaderStateFuzz() {}

  /** Jazzer calls this first: the seeds load and instrument the classes before timing starts. */
  public static void fuzzerInitialize() {
    FuzzTarget.warmUp("loader-state", LoaderStateFuzz::fuzzerTestOneInput);
  }

  public static void fuzzerTestOneInput(byte[] data) {
    LoaderState state;
    try {
      state = LoaderState.fromJson(new String(data, StandardCharsets.UTF_8));
    } catch (IllegalArgumentException e) {
      return;
    }
    String json = state.toJson();
    String again = LoaderState.fromJson(json).toJson();
    if (!json.equals(again)) {
      throw new IllegalStateException(
          "loader state changed on a round trip:\n" + json + "\n" + again);
    }
  }
}
