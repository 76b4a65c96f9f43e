package dev.spindle.spark.serve;

import dev.spindle.spark.plan.BatchKey;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The batches this JVM's consumer has already received, per run: a task attempt that produces a
 * batch an earlier attempt (failed, or speculative) already handed over in this JVM does not hand
 * it over again. Batch keys are deterministic, so the check needs no coordination. Any thread.
 *
 * <p>Across JVMs the driver's ledger keeps each batch once (see {@code FeedLedger}); a batch whose
 * consumer died with its executor is delivered again by the retried task on another JVM, which is
 * the delivery the rank sees.
 */
final class DeliveryRegistry {
  private static final int RUNS_KEPT = 8;
  private static final Map<String, Set<BatchKey>> RUNS = new ConcurrentHashMap<>();

  private DeliveryRegistry() {}

  /** True exactly once per (run, key) in this JVM: the caller may hand the batch over. */
  static boolean claim(String runId, BatchKey key) {
    Set<BatchKey> keys = RUNS.get(runId);
    if (keys == null) {
      trim(runId);
      keys = RUNS.computeIfAbsent(runId, r -> ConcurrentHashMap.newKeySet());
    }
    return keys.add(key);
  }

  /** Forgets older runs so a long-lived executor does not accumulate keys. */
  private static synchronized void trim(String keep) {
    Iterator<String> it = RUNS.keySet().iterator();
    while (RUNS.size() >= RUNS_KEPT && it.hasNext()) {
      if (!it.next().equals(keep)) {
        it.remove();
      }
    }
  }
}
