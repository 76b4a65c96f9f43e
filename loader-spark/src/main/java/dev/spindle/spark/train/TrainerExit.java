package dev.spindle.spark.train;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How one rank's trainer and task ended in one attempt of a {@code train} run, as the task records
 * it ({@link TrainStateStore}) and the driver reports it. Immutable.
 *
 * @param rank the rank
 * @param kind {@code ok}; {@code exit} (the trainer exited with an error or was killed by a signal:
 *     the rank may restart); {@code start} (the trainer exited by itself before it connected to its
 *     feeder: an import or syntax error, a missing file, which a restart would repeat); {@code
 *     timeout} (the trainer hung: it was killed); {@code stopped} (another rank failed, or the job
 *     was stopped: its trainer was stopped); {@code error} (the task failed otherwise)
 * @param exitCode the trainer's exit status (128 + N for signal N), or -1 if it never ran or was
 *     killed by this task
 * @param wallSeconds how long the trainer ran
 * @param waitSeconds how long it waited for batches in this attempt
 * @param epoch the epoch the rank was in when it ended
 * @param host the node it ran on
 * @param executor the Spark executor
 * @param pid the trainer's process id (its process group's too)
 * @param message what happened, in words
 * @param tail the last lines of the trainer's output
 * @param endedAtMs when the task recorded it (epoch milliseconds): the first failure is the cause
 */
record TrainerExit(
    int rank,
    String kind,
    int exitCode,
    double wallSeconds,
    double waitSeconds,
    int epoch,
    String host,
    String executor,
    long pid,
    String message,
    String tail,
    long endedAtMs)
    implements Serializable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Whether a restart from the saved state may help: the trainer itself failed. */
  boolean restartable() {
    return kind.equals("exit");
  }

  /** Whether this rank caused the attempt to fail (a cancelled rank did not). */
  boolean cause() {
    return !kind.equals("ok") && !kind.equals("stopped");
  }

  String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  static TrainerExit fromJson(String json) {
    try {
      return JSON.readValue(json, TrainerExit.class);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(
          "Malformed trainer exit record: " + e.getOriginalMessage(), e);
    }
  }

  /** One failure, as the job's error states it: the rank, where, what, and its last lines. */
  String describe() {
    return "Rank "
        + rank
        + " (trainer pid "
        + pid
        + " on "
        + host
        + ", executor "
        + executor
        + ", epoch "
        + epoch
        + "): "
        + message
        + "\nLast lines of its output:\n"
        + tail;
  }

  Map<String, Object> toReport() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("rank", rank);
    m.put("end", kind);
    m.put("exit_code", exitCode);
    m.put("wall_s", wallSeconds);
    m.put("wait_s", waitSeconds);
    m.put("host", host);
    m.put("executor", executor);
    return m;
  }
}
