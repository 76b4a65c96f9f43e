package dev.spindle.spark.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import org.apache.spark.SparkContext;
import org.apache.spark.Success$;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Records when each task of one job ran, as Spark's scheduler saw it on the driver, so the job's
 * report can show throughput over time across the whole cluster. {@link #attach} marks the jobs the
 * calling thread submits next (a local property, apart from job groups); the listener keeps the
 * first successful attempt of each of their partitions, so one recorder serves one job. The
 * listener bus thread calls the {@code on…} methods; the job's driver thread calls the others.
 */
public final class TaskTimeline extends SparkListener implements AutoCloseable {
  static final String PROPERTY = "spindle.timeline.id";

  /** How long a job waits for the listener bus to deliver its last task ends. */
  public static final long WAIT_MS = 5_000;

  /** One partition's successful attempt: wall-clock launch and finish, epoch milliseconds. */
  public record Span(int partition, long launchMs, long finishMs) {}

  private final SparkContext sc;
  private final String id = UUID.randomUUID().toString();
  private final String outer;
  private final Set<Integer> stages = ConcurrentHashMap.newKeySet();
  private final Map<Integer, Span> spans = new LinkedHashMap<>();

  private TaskTimeline(SparkContext sc) {
    this.sc = sc;
    this.outer = sc.getLocalProperty(PROPERTY);
  }

  /** Starts recording the jobs this thread submits until {@link #close}. */
  public static TaskTimeline attach(SparkContext sc) {
    TaskTimeline t = new TaskTimeline(sc);
    sc.addSparkListener(t);
    sc.setLocalProperty(PROPERTY, t.id);
    return t;
  }

  @Override
  public void onJobStart(SparkListenerJobStart job) {
    if (job.properties() != null && id.equals(job.properties().getProperty(PROPERTY))) {
      CollectionConverters.asJava(job.stageIds()).forEach(s -> stages.add((Integer) s));
    }
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (!stages.contains(end.stageId()) || end.reason() != Success$.MODULE$) {
      return;
    }
    Span s =
        new Span(end.taskInfo().index(), end.taskInfo().launchTime(), end.taskInfo().finishTime());
    synchronized (spans) {
      spans.putIfAbsent(s.partition(), s);
      spans.notifyAll();
    }
  }

  /**
   * The spans seen once {@code partitions} of them arrived or {@code timeoutMs} passed (the
   * listener bus delivers events after the job's result reaches the driver).
   */
  public List<Span> await(int partitions, long timeoutMs) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    synchronized (spans) {
      try {
        long left;
        while (spans.size() < partitions && (left = deadline - System.currentTimeMillis()) > 0) {
          spans.wait(left);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // report what arrived; the caller sees the flag
      }
      return new ArrayList<>(spans.values());
    }
  }

  /**
   * The tasks seen, as {@link #await} returns them, each with what its partition did ({@code
   * counts} of the partition index); partitions {@code counts} returns null for are left out.
   */
  public List<Timeline.Task> tasks(
      int partitions, long timeoutMs, IntFunction<Timeline.Counts> counts) {
    List<Timeline.Task> out = new ArrayList<>();
    for (Span s : await(partitions, timeoutMs)) {
      Timeline.Counts c = counts.apply(s.partition());
      if (c != null) {
        out.add(new Timeline.Task(s.launchMs(), s.finishMs(), c));
      }
    }
    return out;
  }

  /** Stops recording (an enclosing recorder on this thread records again); safe to call twice. */
  @Override
  public void close() {
    sc.setLocalProperty(PROPERTY, outer);
    sc.removeSparkListener(this);
  }
}
