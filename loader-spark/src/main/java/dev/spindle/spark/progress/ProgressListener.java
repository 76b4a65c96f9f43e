package dev.spindle.spark.progress;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorMetricsUpdate;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.Tuple4;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Adds up {@link ProgressCounters} over the whole cluster: the final values of tasks that succeeded
 * plus the latest heartbeat values of tasks still running. A job labelled with a total ({@link
 * JobLabel}) starts the count afresh, at the samples done before it when it continues earlier jobs'
 * work. Called on Spark's listener-bus thread; {@link #snapshot} on any thread.
 */
final class ProgressListener extends SparkListener {
  private final Counts done = new Counts();
  private final Map<Long, Counts> running = new HashMap<>();
  private final Set<Long> ended = new HashSet<>();
  private long total;
  private String label;
  private String unit = "images";
  private boolean started;

  /**
   * What the cluster has done so far in the current labelled job; {@code stages} maps each pipeline
   * stage to its summed {@code {busyMs, elapsedMs}} ({@link StageTimes}).
   */
  public record Snapshot(
      boolean started,
      String label,
      long total,
      long samples,
      long bytes,
      long quarantined,
      Map<String, long[]> stages,
      String unit) {
    /** A snapshot of a job of images ({@code unit} {@code images}). */
    public Snapshot(
        boolean started,
        String label,
        long total,
        long samples,
        long bytes,
        long quarantined,
        Map<String, long[]> stages) {
      this(started, label, total, samples, bytes, quarantined, stages, "images");
    }
  }

  /** One task's (or the ended tasks') counters. */
  private static final class Counts {
    final long[] values = new long[3];
    final Map<String, long[]> stages = new TreeMap<>();

    void clear() {
      Arrays.fill(values, 0);
      stages.clear();
    }

    void addTo(long[] sums, Map<String, long[]> stageSums) {
      for (int i = 0; i < sums.length; i++) {
        sums[i] += values[i];
      }
      StageTimes.addInto(stageSums, stages);
    }
  }

  @Override
  public synchronized void onJobStart(SparkListenerJobStart e) {
    Properties p = e.properties();
    String t = p == null ? null : p.getProperty(JobLabel.TOTAL);
    if (t == null) {
      return; // a helper job (counting shards, announcing servers): not the job to watch
    }
    total = Long.parseLong(t);
    label = p.getProperty(JobLabel.LABEL);
    unit = p.getProperty(JobLabel.UNIT, "images");
    started = true;
    done.clear();
    String before = p.getProperty(JobLabel.BEFORE);
    done.values[0] = before == null ? 0 : Long.parseLong(before); // a restart continues the count
    running.clear();
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
    long id = e.taskInfo().taskId();
    running.remove(id);
    ended.add(id);
    if (e.taskInfo().successful()) {
      add(done, CollectionConverters.asJava(e.taskInfo().accumulables()));
    }
  }

  @Override
  public synchronized void onExecutorMetricsUpdate(SparkListenerExecutorMetricsUpdate e) {
    for (Tuple4<Object, Object, Object, scala.collection.immutable.Seq<AccumulableInfo>> u :
        CollectionConverters.asJava(e.accumUpdates())) {
      long id = (Long) u._1();
      if (!ended.contains(id)) { // a late heartbeat must not count an ended task twice
        Counts v = new Counts();
        if (add(v, CollectionConverters.asJava(u._4()))) {
          running.put(id, v);
        }
      }
    }
  }

  /** The counts so far; any thread. */
  public synchronized Snapshot snapshot() {
    long[] sum = new long[3];
    Map<String, long[]> stages = new TreeMap<>();
    done.addTo(sum, stages);
    running.values().forEach(v -> v.addTo(sum, stages));
    return new Snapshot(started, label, total, sum[0], sum[1], sum[2], stages, unit);
  }

  /** Adds the updates of Spindle's counters among {@code infos} to {@code into}. */
  @SuppressWarnings("unchecked")
  private static boolean add(Counts into, Iterable<AccumulableInfo> infos) {
    boolean any = false;
    for (AccumulableInfo a : infos) {
      String name = a.name().isDefined() ? a.name().get() : null;
      Object update = a.update().isDefined() ? a.update().get() : null;
      int i = index(name);
      if (i >= 0 && update instanceof Long n) {
        into.values[i] += n;
        any = true;
      } else if (StageTimes.NAME.equals(name) && update instanceof Map<?, ?> m) {
        StageTimes.addInto(into.stages, (Map<String, long[]>) m);
        any = true;
      }
    }
    return any;
  }

  private static int index(String name) {
    if (ProgressCounters.SAMPLES.equals(name)) {
      return 0;
    }
    if (ProgressCounters.BYTES.equals(name)) {
      return 1;
    }
    return ProgressCounters.QUARANTINED.equals(name) ? 2 : -1;
  }
}
