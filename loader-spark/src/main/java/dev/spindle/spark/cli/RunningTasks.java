package dev.spindle.spark.cli;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;

/**
 * The tasks of a command's session that started and have not ended, as Spark's listener bus reports
 * them. When a job fails or is cancelled, Spark fails it at once and only asks its running tasks to
 * stop; stopping the session under them races with their end (and with what the job's cleanup set
 * going, such as a broadcast's removal), which Spark reports with stack traces. So a failed command
 * cancels its jobs and waits here before it stops the session. Listener-bus thread and main thread.
 */
final class RunningTasks extends SparkListener {
  private static final long POLL_MS = 50;

  private final AtomicInteger running = new AtomicInteger();

  /** Counts {@code sc}'s tasks from now on. */
  static RunningTasks attach(SparkContext sc) {
    RunningTasks tasks = new RunningTasks();
    sc.addSparkListener(tasks);
    return tasks;
  }

  @Override
  public void onTaskStart(SparkListenerTaskStart start) {
    running.incrementAndGet();
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    running.decrementAndGet();
  }

  /**
   * Cancels {@code sc}'s jobs and waits, at most {@code timeout}, until none of their tasks runs;
   * returns whether that happened in time.
   */
  boolean cancelAndAwait(SparkContext sc, Duration timeout) throws InterruptedException {
    sc.cancelAllJobs();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (running.get() > 0) {
      if (System.nanoTime() >= deadline) {
        return false;
      }
      Thread.sleep(POLL_MS);
    }
    return true;
  }
}
