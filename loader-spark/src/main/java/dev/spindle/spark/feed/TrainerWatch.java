package dev.spindle.spark.feed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.spark.TaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one rank's trainer for its task, on a daemon thread: when the trainer exits (with an
 * error at once; cleanly, after a short grace for its last messages to arrive) or the task is
 * cancelled (another rank failed, the job was stopped), it kills the trainer's process group and
 * fails the rank's feeder, so the task thread, blocked in the feed, stops at once instead of
 * waiting out the trainer timeout; and it copies the state file the trainer keeps current into the
 * run's {@link TrainStateStore} whenever it changed (at most every {@link #MIRROR_MS}). The task
 * thread calls {@link #check} in its waits and {@link #close} at the end.
 */
final class TrainerWatch implements RankServeTask.Watch, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TrainerWatch.class);
  static final long MIRROR_MS = 1000;
  private static final long CLEAN_EXIT_GRACE_MS = 3000;

  private final int rank;
  private final TrainerProcess trainer;
  private final TaskContext task;
  private final Path stateOut;
  private final TrainStateStore store;
  private final Thread thread;
  private volatile boolean closed;
  private volatile boolean serving = true;
  private volatile RuntimeException failure;
  private String mirrored;
  private long cleanExitSeenMs = -1;

  TrainerWatch(
      int rank, TrainerProcess trainer, TaskContext task, Path stateOut, TrainStateStore store) {
    this.rank = rank;
    this.trainer = trainer;
    this.task = task;
    this.stateOut = stateOut;
    this.store = store;
    this.thread = new Thread(this::watch, "spindle-trainer-watch-" + rank);
    thread.setDaemon(true);
    thread.start();
  }

  /** Throws why the rank cannot go on (the trainer is gone, the task cancelled), if so. */
  @Override
  public void check() {
    RuntimeException f = failure;
    if (f != null) {
      throw f;
    }
  }

  /** Whether the task was cancelled (by Spark: another rank failed, or the job was stopped). */
  boolean cancelled() {
    return task != null && task.isInterrupted();
  }

  /** The rank's last batch was taken: from now on the trainer's exit is its task's business. */
  void servingDone() {
    serving = false;
  }

  /** Copies the trainer's current state into the store, if it wrote one since the last copy. */
  synchronized void mirror() {
    try {
      if (!Files.exists(stateOut)) {
        return;
      }
      // by content: steps can be faster than the file system's time stamps, and the state's
      // JSON has the same length from one batch count to the next
      String json = Files.readString(stateOut);
      if (!json.isBlank() && !json.equals(mirrored)) {
        store.saveState(rank, json);
        mirrored = json;
      }
    } catch (IOException e) {
      LOG.warn(
          "Could not copy rank {}'s loader state {} to {}: {}",
          rank,
          stateOut,
          store.location(),
          e.toString());
    }
  }

  private void watch() {
    long lastMirror = 0;
    while (!closed) {
      long now = System.currentTimeMillis();
      if (failure == null && serving) {
        failure = lookForFailure(now);
        if (failure != null) {
          trainer.kill();
          ExecutorServing.existingFeeder(rank).ifPresent(f -> f.fail(failure));
        }
      }
      if (now - lastMirror >= MIRROR_MS) {
        mirror();
        lastMirror = now;
      }
      try {
        TimeUnit.MILLISECONDS.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private RuntimeException lookForFailure(long now) {
    if (cancelled()) {
      return new TrainCancelled(
          "The task of rank "
              + rank
              + " was cancelled ("
              + task.getKillReason().getOrElse(() -> "the job was stopped")
              + "); its trainer was"
              + " killed");
    }
    if (trainer.isAlive()) {
      return null;
    }
    int code = trainer.exitCode();
    if (code == 0) {
      if (cleanExitSeenMs < 0) {
        cleanExitSeenMs = now;
      }
      if (now - cleanExitSeenMs < CLEAN_EXIT_GRACE_MS) {
        return null; // its END and BYE may still be on their way
      }
      return new TrainerFailed(
          code,
          "its trainer exited (status 0) before it took every"
              + " batch of the run: the script must iterate the loader to the end of every epoch"
              + " (for epoch in loader.epochs(): for batch in loader: ...)");
    }
    return new TrainerFailed(
        code,
        "its trainer exited with status "
            + code
            + (code > 128 ? " (killed by signal " + (code - 128) + ")" : ""));
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    try {
      thread.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    mirror();
  }

  /** The trainer process ended before the rank was done. */
  static final class TrainerFailed extends IllegalStateException {
    final int exitCode;

    TrainerFailed(int exitCode, String message) {
      super(message);
      this.exitCode = exitCode;
    }
  }

  /** Spark cancelled the rank's task. */
  static final class TrainCancelled extends IllegalStateException {
    TrainCancelled(String message) {
      super(message);
    }
  }
}
