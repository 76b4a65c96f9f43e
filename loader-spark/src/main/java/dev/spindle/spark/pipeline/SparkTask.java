package dev.spindle.spark.pipeline;

import org.apache.spark.TaskContext;
import org.apache.spark.util.TaskCompletionListener;

/**
 * The Spark task a pipeline was started in, if any: closes the pipeline when the task completes
 * (success, failure or kill) and lets the consumer notice a kill. Only this class touches Spark's
 * task API, so pipelines also run in JVMs without Spark.
 */
final class SparkTask {
  private final TaskContext context;

  private SparkTask(TaskContext context) {
    this.context = context;
  }

  /** The current thread's task with {@code onCompletion} registered, or null outside a task. */
  static SparkTask current(Runnable onCompletion) {
    TaskContext tc;
    try {
      tc = TaskContext.get();
    } catch (NoClassDefFoundError noSpark) {
      return null;
    }
    if (tc == null) {
      return null;
    }
    TaskCompletionListener listener = ctx -> onCompletion.run();
    try {
      // Called reflectively: resolving the overloaded method at compile time needs scala-library
      // on the main classpath, which this module has only for tests.
      TaskContext.class
          .getMethod("addTaskCompletionListener", TaskCompletionListener.class)
          .invoke(tc, listener);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Cannot register a Spark task completion listener", e);
    }
    return new SparkTask(tc);
  }

  boolean killed() {
    return context.isInterrupted();
  }

  /** Throws Spark's {@code TaskKilledException} when the task was killed. */
  void throwIfKilled() {
    context.killTaskIfInterrupted();
  }
}
