package dev.spindle.spark.shard;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a job says about the files of its input that it did not read ({@link InputListing.Skipped}):
 * one warning that sums them up by reason (each file at DEBUG), and the report's {@code
 * input_skipped} (the first {@value #REPORTED}, each {@code path} and {@code reason}) and {@code
 * input_skipped_total}. Stateless; any thread.
 */
public final class SkippedInputs {
  /** How many the report lists; a tree with a {@code ._*} file per image could have millions. */
  public static final int REPORTED = 100;

  private static final Logger LOG = LoggerFactory.getLogger(SkippedInputs.class);
  private static final int NAMED_PER_REASON = 3;

  private SkippedInputs() {}

  /**
   * Logs the skipped files of {@code input} once, grouped by reason; nothing when there are none.
   */
  public static void log(String input, List<InputListing.Skipped> skipped) {
    if (skipped.isEmpty()) {
      return;
    }
    Map<String, List<String>> byReason = new LinkedHashMap<>();
    for (InputListing.Skipped s : skipped) {
      byReason.computeIfAbsent(s.reason(), r -> new ArrayList<>()).add(s.path());
      LOG.debug("Input {}: not read: {}: {}", input, s.path(), s.reason());
    }
    List<String> parts = new ArrayList<>();
    byReason.forEach(
        (reason, paths) ->
            parts.add(
                paths.size()
                    + " × "
                    + reason
                    + " ("
                    + String.join(", ", paths.subList(0, Math.min(NAMED_PER_REASON, paths.size())))
                    + (paths.size() > NAMED_PER_REASON ? ", …" : "")
                    + ")"));
    LOG.warn(
        "Input {}: {} files not read (the report's input_skipped lists them): {}",
        input,
        skipped.size(),
        String.join("; ", parts));
  }

  /** The report's {@code input_skipped}: the first {@value #REPORTED}, as path and reason. */
  public static List<Map<String, String>> reportList(List<InputListing.Skipped> skipped) {
    return skipped.stream()
        .limit(REPORTED)
        .map(k -> Map.of("path", k.path(), "reason", k.reason()))
        .toList();
  }
}
