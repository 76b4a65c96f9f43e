package dev.spindle.spark.pipeline;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The statistics of every pipeline stage of this JVM (an executor, or the driver in local mode), by
 * stage name, for Spark's metrics system: counts and blocked time of closed pipelines plus those of
 * the running ones; occupancy and busy fraction of the running ones. Pipelines report here when
 * they start and close, never per item. Any thread.
 */
public final class ExecutorStats {
  private static final Set<RunningPipeline<?>> LIVE = new HashSet<>();
  private static final Map<String, Totals> CLOSED = new LinkedHashMap<>();
  private static final List<Consumer<String>> STAGE_LISTENERS = new CopyOnWriteArrayList<>();

  /** One stage name's values now. */
  public record StageTotals(
      long items,
      long failures,
      double blockedMs,
      double queueOccupancy,
      double busyFraction,
      int running) {}

  private static final class Totals {
    long items;
    long failures;
    double blockedMs;
  }

  private ExecutorStats() {}

  static void started(RunningPipeline<?> p) {
    List<String> fresh = new ArrayList<>();
    synchronized (ExecutorStats.class) {
      LIVE.add(p);
      for (StageStats s : p.stats().stages()) {
        if (!CLOSED.containsKey(s.name())) {
          CLOSED.put(s.name(), new Totals());
          fresh.add(s.name());
        }
      }
    }
    fresh.forEach(n -> STAGE_LISTENERS.forEach(l -> l.accept(n)));
  }

  static synchronized void closed(RunningPipeline<?> p) {
    TraceWriter trace = Trace.writer;
    if (trace != null && LIVE.contains(p)) {
      trace.queues(); // the queues as the pipeline ends, however short it ran
    }
    if (!LIVE.remove(p)) {
      return;
    }
    for (StageStats s : p.stats().stages()) {
      Totals t = CLOSED.computeIfAbsent(s.name(), n -> new Totals());
      t.items += s.items();
      t.failures += s.failures();
      t.blockedMs += s.blockedPutMs() + s.blockedGetMs();
    }
  }

  /**
   * Calls {@code listener} with every stage name seen so far and then with each new one, on the
   * thread that starts the pipeline naming it (so it must be quick).
   */
  public static void onStage(Consumer<String> listener) {
    STAGE_LISTENERS.add(listener);
    List<String> known;
    synchronized (ExecutorStats.class) {
      known = List.copyOf(CLOSED.keySet());
    }
    known.forEach(listener);
  }

  /** Stops calling {@code listener}. */
  public static void removeListener(Consumer<String> listener) {
    STAGE_LISTENERS.remove(listener);
  }

  /** The values of stage {@code name} now (zeros for a name never seen). */
  public static synchronized StageTotals stage(String name) {
    Totals t = CLOSED.getOrDefault(name, new Totals());
    long items = t.items;
    long failures = t.failures;
    double blocked = t.blockedMs;
    double occupancy = 0;
    double busy = 0;
    int running = 0;
    for (RunningPipeline<?> p : LIVE) {
      StageStats s = p.stats().stage(name);
      if (s != null) {
        items += s.items();
        failures += s.failures();
        blocked += s.blockedPutMs() + s.blockedGetMs();
        occupancy += s.queueOccupancy();
        busy += s.busyFraction();
        running++;
      }
    }
    int n = Math.max(1, running);
    return new StageTotals(items, failures, blocked, occupancy / n, busy / n, running);
  }

  /** Items waiting now in each stage's output queue, summed over the running pipelines. */
  static synchronized Map<String, Integer> queueItems() {
    Map<String, Integer> m = new LinkedHashMap<>();
    for (RunningPipeline<?> p : LIVE) {
      p.meters()
          .forEach(
              s -> {
                if (!s.kind.equals("sink")) {
                  m.merge(s.name, s.queueItems(), Integer::sum);
                }
              });
    }
    return m;
  }

  /** Items dropped and quarantined by every stage so far. */
  public static synchronized long quarantined() {
    long sum = 0;
    for (String name : CLOSED.keySet()) {
      sum += stage(name).failures();
    }
    return sum;
  }
}
