package dev.spindle.spark.progress;

import dev.spindle.spark.pipeline.PipelineStats;
import dev.spindle.spark.pipeline.StageStats;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import org.apache.spark.util.AccumulatorV2;

/**
 * A Spark accumulator of busy and elapsed milliseconds per pipeline stage, summed over a job's
 * tasks: the driver's {@link ProgressListener} reads it from heartbeats and task ends, and the
 * stage with the highest busy share of its time is the live line's bottleneck (the report's rule,
 * {@link PipelineStats#bottleneck()}, applied cluster-wide). A task's copy is added to on the task
 * thread and read by the executor's heartbeat thread, hence the synchronisation.
 *
 * <p>The value maps a stage's name to {@code {busyMs, elapsedMs}}.
 */
final class StageTimes extends AccumulatorV2<Map<String, long[]>, Map<String, long[]>> {
  /** The accumulator's name, as {@link ProgressListener} looks it up. */
  static final String NAME = "spindle.stages";

  private final TreeMap<String, long[]> times = new TreeMap<>();

  /** The pipeline's name for its consumer stage (the task thread that takes its output). */
  public static final String SINK = "sink";

  /**
   * The per-stage {@code {busyMs, elapsedMs}} of one pipeline's statistics so far: busy is the
   * stage's {@link StageStats#busyFraction()} of the pipeline's elapsed time.
   */
  public static Map<String, long[]> of(PipelineStats stats) {
    return of(stats, SINK);
  }

  /**
   * {@link #of(PipelineStats)}, with the consumer stage ({@value #SINK}) called {@code sink}: what
   * a line should name when the consumer bounds the job (e.g. {@code trainer}).
   */
  public static Map<String, long[]> of(PipelineStats stats, String sink) {
    Map<String, long[]> m = new TreeMap<>();
    long elapsed = Math.round(stats.elapsedMs());
    for (StageStats s : stats.stages()) {
      String name = s.name().equals(SINK) ? sink : s.name();
      m.put(name, new long[] {Math.round(s.busyFraction() * elapsed), elapsed});
    }
    return m;
  }

  /** {@code after - before}, per stage: what a task did since its last update. */
  public static Map<String, long[]> minus(Map<String, long[]> after, Map<String, long[]> before) {
    Map<String, long[]> m = new TreeMap<>();
    after.forEach(
        (name, a) -> {
          long[] b = before.getOrDefault(name, new long[2]);
          m.put(name, new long[] {a[0] - b[0], a[1] - b[1]});
        });
    return m;
  }

  /**
   * The stage busiest over {@code times}, or null when no stage has run for 100 ms yet (too little
   * to tell).
   */
  public static String busiest(Map<String, long[]> times) {
    String best = null;
    double share = -1;
    for (Map.Entry<String, long[]> e : times.entrySet()) {
      long[] t = e.getValue();
      if (t[1] >= 100 && (double) t[0] / t[1] > share) {
        share = (double) t[0] / t[1];
        best = e.getKey();
      }
    }
    return best;
  }

  /** Adds {@code other}'s stages into {@code into}. */
  static void addInto(Map<String, long[]> into, Map<String, long[]> other) {
    other.forEach(
        (name, t) -> {
          long[] sum = into.computeIfAbsent(name, n -> new long[2]);
          sum[0] += t[0];
          sum[1] += t[1];
        });
  }

  @Override
  public synchronized boolean isZero() {
    return times.isEmpty();
  }

  @Override
  public synchronized StageTimes copy() {
    StageTimes c = new StageTimes();
    addInto(c.times, times);
    return c;
  }

  @Override
  public synchronized void reset() {
    times.clear();
  }

  @Override
  public synchronized void add(Map<String, long[]> v) {
    addInto(times, v);
  }

  @Override
  public void merge(AccumulatorV2<Map<String, long[]>, Map<String, long[]>> other) {
    Map<String, long[]> v = other.value();
    synchronized (this) {
      addInto(times, v);
    }
  }

  /** A copy of the sums: {@code name -> {busyMs, elapsedMs}}. */
  @Override
  public synchronized Map<String, long[]> value() {
    Map<String, long[]> m = new Shown();
    addInto(m, times);
    return m;
  }

  /** The sums as Spark's UI shows an accumulator's value: {@code decode 97% busy, read 4% busy}. */
  private static final class Shown extends TreeMap<String, long[]> {
    @Override
    public String toString() {
      StringJoiner j = new StringJoiner(", ");
      forEach(
          (name, t) ->
              j.add(
                  String.format(
                      Locale.ROOT, "%s %.0f%% busy", name, t[1] > 0 ? 100.0 * t[0] / t[1] : 0.0)));
      return j.toString();
    }
  }
}
