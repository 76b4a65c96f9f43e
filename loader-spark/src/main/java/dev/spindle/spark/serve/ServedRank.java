package dev.spindle.spark.serve;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where and how one rank was served in one epoch, reported by its task to the driver.
 *
 * @param rank the rank
 * @param firstBatch the batch the task started from (the trainer's resume point, if it stated one)
 * @param trainerResume the resume point the trainer's HELLO stated, -1 for none
 * @param executor the Spark executor id
 * @param host the executor's host
 * @param socket the bridge socket the trainer connected to
 * @param device the feeder's device description
 * @param feederStatsJson the feeder's statistics when the rank finished ({@code FeederStats} JSON:
 *     cumulative since the feeder was created, which may be an earlier epoch or run)
 * @param trainerWaitNanos how long the trainer waited for this leg's batches (its requests that
 *     found no batch ready)
 */
public record ServedRank(
    int rank,
    int firstBatch,
    long trainerResume,
    String executor,
    String host,
    String socket,
    String device,
    String feederStatsJson,
    long trainerWaitNanos)
    implements Serializable {

  public Map<String, Object> toReport() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("executor", executor);
    m.put("host", host);
    m.put("socket", socket);
    m.put("device", device);
    m.put("trainer_resume", trainerResume);
    m.put("trainer_wait_s", trainerWaitNanos / 1e9);
    return m;
  }
}
