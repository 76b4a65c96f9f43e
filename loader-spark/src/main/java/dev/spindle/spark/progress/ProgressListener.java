package dev.spindle.spark.progress;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorMetricsUpdate;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.Tuple4;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Adds up {@link ProgressCounters} over the whole cluster: the final values of tasks that
 * succeeded plus the latest heartbeat values of tasks still running. A job labelled with a total
 * ({@link JobLabel}) starts the count afresh. Called on Spark's listener-bus thread; {@link
 * #snapshot} on any thread.
 */
public final class ProgressListener extends SparkListener {
  private final long[] done = new long[3];
  private final Map<Long, long[]> running = new HashMap<>();
  private final Set<Long> ended = new HashSet<>();
  private long total;
  private String label;
  private boolean started;

  /** What the cluster has done so far in the current labelled job. */
  public record Snapshot(boolean started, String label, long total, long samples,
      long bytes, long quarantined) {}

  @Override
  public synchronized void onJobStart(SparkListenerJobStart e) {
    Properties p = e.properties();
    String t = p == null ? null : p.getProperty(JobLabel.TOTAL);
    if (t == null) {
      return; // a helper job (counting shards, announcing servers): not the job to watch
    }
    total = Long.parseLong(t);
    label = p.getProperty(JobLabel.LABEL);
    started = true;
    java.util.Arrays.fill(done, 0);
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
    for (Tuple4<Object, Object, Object, scala.collection.immutable.Seq<AccumulableInfo>> u
        : CollectionConverters.asJava(e.accumUpdates())) {
      long id = (Long) u._1();
      if (!ended.contains(id)) { // a late heartbeat must not count an ended task twice
        long[] v = new long[3];
        if (add(v, CollectionConverters.asJava(u._4()))) {
          running.put(id, v);
        }
      }
    }
  }

  /** The counts so far; any thread. */
  public synchronized Snapshot snapshot() {
    long[] sum = done.clone();
    running.values().forEach(v -> {
      for (int i = 0; i < sum.length; i++) {
        sum[i] += v[i];
      }
    });
    return new Snapshot(started, label, total, sum[0], sum[1], sum[2]);
  }

  /** Adds the updates of Spindle's counters among {@code infos} to {@code into}. */
  private static boolean add(long[] into, Iterable<AccumulableInfo> infos) {
    boolean any = false;
    for (AccumulableInfo a : infos) {
      int i = index(a.name().isDefined() ? a.name().get() : null);
      if (i >= 0 && a.update().isDefined() && a.update().get() instanceof Long n) {
        into[i] += n;
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
