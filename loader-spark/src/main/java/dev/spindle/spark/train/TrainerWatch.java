package dev.spindle.spark.train;

import dev.spindle.spark.serve.ExecutorServing;
import dev.spindle.spark.serve.RankServeTask;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.spark.TaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches one rank's trainer for its task, on a daemon thread: when the trainer exits (with an
 * error at once; cleanly, after a short grace for its last messages to arrive), another rank's
 * failure ended the attempt (the store says so: {@link TrainStateStore#failure}) or the task is
 * cancelled (the job was stopped), it kills the trainer's process group and fails the rank's
 * feeder, so the task thread, blocked in the feed, stops at once instead of waiting out the trainer
 * timeout; and it copies the files the trainer keeps current (its loader state and its checkpoint
 * record) into the run's {@link TrainStateStore} whenever they changed (at most every {@link
 * #MIRROR_MS}). The task thread calls {@link #check} in its waits, {@link #connected} when the
 * trainer said hello, and {@link #close} at the end.
 */
final class TrainerWatch implements RankServeTask.Watch, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TrainerWatch.class);
  static final long MIRROR_MS = 1000;
  private static final long PEER_MS = 500;
  private static final long CLEAN_EXIT_GRACE_MS = 3000;

  private final int rank;
  private final TrainerProcess trainer;
  private final TaskContext task;
  private final Path stateOut;
  private final Path checkpointOut;
  private final TrainStateStore store;
  private final String runId;
  private final int attempt;
  private final Thread thread;
  private volatile boolean closed;
  private volatile boolean serving = true;
  private volatile boolean connected;
  private volatile long connectedNanos;
  private volatile RuntimeException failure;
  private volatile TrainerExit stoppedBy;
  private String mirroredState;
  private String mirroredCheckpoint;
  private long cleanExitSeenMs = -1;

  /**
   * @param stateOut the trainer's {@code SPINDLE_STATE_OUT}
   * @param checkpointOut the trainer's {@code SPINDLE_CHECKPOINT_OUT}
   * @param runId the run, and {@code attempt} its attempt, whose failure record ends this rank
   */
  TrainerWatch(
      int rank,
      TrainerProcess trainer,
      TaskContext task,
      Path stateOut,
      Path checkpointOut,
      TrainStateStore store,
      String runId,
      int attempt) {
    this.rank = rank;
    this.trainer = trainer;
    this.task = task;
    this.stateOut = stateOut;
    this.checkpointOut = checkpointOut;
    this.store = store;
    this.runId = runId;
    this.attempt = attempt;
    this.thread = new Thread(this::watch, "spindle-trainer-watch-" + rank);
    thread.setDaemon(true);
    thread.start();
  }

  /** The trainer said hello to the rank's feeder (each epoch's connection does). */
  @Override
  public void connected() {
    connected = true;
    connectedNanos = System.nanoTime();
  }

  /** When the trainer last said hello ({@link System#nanoTime}); 0 before it did. */
  long connectedNanos() {
    return connectedNanos;
  }

  /** The failure of another rank that stopped this one, or null. */
  TrainerExit stoppedBy() {
    return stoppedBy;
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

  /**
   * Copies the trainer's current loader state and checkpoint record into the store, each if it
   * changed since the last copy (by content: steps can be faster than the file system's time
   * stamps, and the state's JSON has the same length from one batch count to the next).
   */
  synchronized void mirror() {
    try {
      String state = changed(stateOut, mirroredState);
      if (state != null) {
        store.saveState(rank, state);
        mirroredState = state;
      }
      String record = changed(checkpointOut, mirroredCheckpoint);
      if (record != null) {
        store.saveCheckpoint(rank, record);
        mirroredCheckpoint = record;
      }
    } catch (IOException e) {
      LOG.warn(
          "Could not copy rank {}'s loader state {} or checkpoint record {} to {}: {}",
          rank,
          stateOut,
          checkpointOut,
          store.location(),
          e.toString());
    }
  }

  /** The file's content if it is there and differs from {@code last}, else null. */
  private static String changed(Path file, String last) throws IOException {
    if (!Files.exists(file)) {
      return null;
    }
    String json = Files.readString(file);
    return json.isBlank() || json.equals(last) ? null : json;
  }

  private void watch() {
    long lastMirror = 0;
    long lastPeerCheck = 0;
    while (!closed) {
      long now = System.currentTimeMillis();
      if (failure == null && serving) {
        stop(lookForFailure(now));
      }
      if (failure == null && now - lastPeerCheck >= PEER_MS) {
        stop(peerFailure()); // also once serving is done: the trainer may wait for its peers
        lastPeerCheck = now;
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

  private void stop(RuntimeException why) {
    if (why != null) {
      failure = why;
      trainer.kill();
      ExecutorServing.existingFeeder(rank).ifPresent(f -> f.fail(why));
    }
  }

  /** Another rank's failure that ended this attempt, as this rank's failure; else null. */
  private RuntimeException peerFailure() {
    try {
      TrainerExit other = store.failure(runId, attempt).map(TrainerExit::fromJson).orElse(null);
      if (other == null || other.rank() == rank) {
        return null;
      }
      stoppedBy = other;
      return new TrainCancelled(
          "rank "
              + other.rank()
              + " failed ("
              + other.message()
              + "), so rank "
              + rank
              + "'s trainer was stopped");
    } catch (IOException | IllegalStateException e) {
      LOG.warn("Could not read the run's failure record in {}: {}", store.location(), e.toString());
      return null;
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
          !connected,
          "its trainer exited (status 0) before it took every"
              + " batch of the run: the script must iterate the loader to the end of every epoch"
              + " (for epoch in loader.epochs(): for batch in loader: ...)");
    }
    boolean signal = code > 128;
    return new TrainerFailed(
        code,
        !connected && !signal,
        "its trainer exited with status "
            + code
            + (signal ? " (killed by signal " + (code - 128) + ")" : "")
            + (connected || signal
                ? ""
                : " before it connected to its feeder: a failure in the script's start (an"
                    + " import, a syntax error, a missing file or argument), which a restart"
                    + " would repeat, so the run is not restarted"));
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

    /** It exited by itself before it ever connected: a restart would fail alike. */
    final boolean beforeConnecting;

    TrainerFailed(int exitCode, boolean beforeConnecting, String message) {
      super(message);
      this.exitCode = exitCode;
      this.beforeConnecting = beforeConnecting;
    }
  }

  /** Spark cancelled the rank's task. */
  static final class TrainCancelled extends IllegalStateException {
    TrainCancelled(String message) {
      super(message);
    }
  }
}
