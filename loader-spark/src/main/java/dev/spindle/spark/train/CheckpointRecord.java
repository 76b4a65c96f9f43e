package dev.spindle.spark.train;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;

/**
 * The checkpoints one rank's trainer has, newest first, as {@code spindle_bridge.checkpoint.save}
 * records them in {@code SPINDLE_CHECKPOINT_OUT} after each checkpoint file is in place (format
 * {@value #FORMAT}): each one's file and the loader state it holds. {@code train} copies the record
 * into its state store and restarts the rank from one of them ({@link RestartPoint}). Immutable.
 *
 * <pre>
 * { "format": "spindle-checkpoint-record/1",
 *   "checkpoints": [ { "file": "/ckpt/rank-0.pt", "state": { loader state } },
 *                    { "file": "/ckpt/rank-0.pt.prev", "state": { loader state } } ] }
 * </pre>
 *
 * @param checkpoints newest first; never empty
 */
record CheckpointRecord(List<Entry> checkpoints) {
  static final String FORMAT = "spindle-checkpoint-record/1";
  private static final ObjectMapper JSON = new ObjectMapper();

  CheckpointRecord {
    checkpoints = List.copyOf(checkpoints);
  }

  /**
   * One checkpoint file and the loader state JSON it holds (the batch of its step counted as
   * consumed).
   */
  record Entry(String file, String state) {}

  /**
   * Reads a record.
   *
   * @throws IllegalArgumentException naming what is wrong (another format, no checkpoint, an entry
   *     without its file or state)
   */
  static CheckpointRecord fromJson(String json) {
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "Malformed checkpoint record: " + e.getOriginalMessage(), e);
    }
    if (root == null || !FORMAT.equals(root.path("format").asText(null))) {
      throw new IllegalArgumentException(
          "Not a checkpoint record (format " + FORMAT + "): " + abbreviated(json));
    }
    List<Entry> entries = new ArrayList<>();
    for (JsonNode c : root.path("checkpoints")) {
      if (!c.path("file").isTextual() || !c.path("state").isObject()) {
        throw new IllegalArgumentException(
            "Invalid checkpoint record entry (needs \"file\" and \"state\"): " + c);
      }
      entries.add(new Entry(c.get("file").asText(), c.get("state").toString()));
    }
    if (entries.isEmpty()) {
      throw new IllegalArgumentException("Checkpoint record without checkpoints: " + json);
    }
    return new CheckpointRecord(entries);
  }

  private static String abbreviated(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "… (" + s.length() + " chars)";
  }
}
