package dev.spindle.spark.preprocess;

import java.time.Duration;
import org.apache.spark.JobExecutionStatus;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkJobInfo;
import org.apache.spark.SparkStageInfo;
import org.apache.spark.SparkStatusTracker;
import scala.Option;

/**
 * Waits for the tasks of a failed job group to end. When a job fails, Spark fails it at once and
 * only asks its other running tasks to stop; they end later, and a task still writing its attempt
 * file would recreate what the driver's abort has just deleted. So a failure path cancels the
 * group, waits here, and only then aborts. Driver thread.
 *
 * <p>Spark's status tracker follows the listener bus, a little behind the scheduler. Spark posts a
 * job's end before the caller of the job hears of its failure, and the starts of its tasks before
 * that, so once the tracker shows the group's jobs ended it has counted every task that started;
 * the wait then lasts until their ends arrive too.
 */
final class JobGroupTasks {
  private static final long POLL_MS = 50;

  private JobGroupTasks() {}

  /**
   * Cancels the jobs of {@code group} and waits, at most {@code timeout}, until the tracker shows
   * them ended (at least one when {@code submitted}: the caller started a job in the group) and
   * none of their tasks running. Returns whether that happened in time.
   */
  static boolean cancelAndAwait(SparkContext sc, String group, boolean submitted, Duration timeout)
      throws InterruptedException {
    sc.cancelJobGroup(group);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!ended(sc.statusTracker(), group, submitted)) {
      if (System.nanoTime() >= deadline) {
        return false;
      }
      Thread.sleep(POLL_MS);
    }
    return true;
  }

  /**
   * Whether the group's jobs have ended (and there is one, when {@code submitted}) with no task
   * running.
   */
  static boolean ended(SparkStatusTracker tracker, String group, boolean submitted) {
    int[] jobs = tracker.getJobIdsForGroup(group);
    if (submitted && jobs.length == 0) {
      return false; // the tracker has not heard of the job yet
    }
    for (int jobId : jobs) {
      Option<SparkJobInfo> job = tracker.getJobInfo(jobId);
      if (job.isEmpty() || job.get().status() == JobExecutionStatus.RUNNING) {
        return false;
      }
      for (int stageId : job.get().stageIds()) {
        Option<SparkStageInfo> stage = tracker.getStageInfo(stageId);
        if (stage.isDefined() && stage.get().numActiveTasks() > 0) {
          return false;
        }
      }
    }
    return true;
  }
}
