package dev.spindle.spark.train;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank's training script, a child process of the rank's task: {@code PYTHON -m
 * spindle_bridge.launch SCRIPT ARGS}, which puts itself in a process group of its own (so {@link
 * #kill} reaches whatever the script started) and kills that group if this JVM dies. Its output
 * (stdout and stderr) goes line by line, with a {@code [rank N]} prefix, once: to the console when
 * {@code echo} (local mode, where the executor is the driver; the log has it at DEBUG), else to
 * this JVM's log; the last lines are kept for error messages. Owned by the task that started it;
 * {@link #kill} may be called from any thread.
 */
final class TrainerProcess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TrainerProcess.class);
  private static final int TAIL_LINES = 40;

  /** {@link #tail} of a trainer that printed nothing. */
  static final String NO_OUTPUT = "(no output)";

  private final int rank;
  private final Process process;
  private final Deque<String> tail = new ArrayDeque<>();
  private final Thread pump;
  private final long startNanos = System.nanoTime();

  private TrainerProcess(
      int rank, Process process, BufferedReader output, List<String> early, boolean echo) {
    this.rank = rank;
    this.process = process;
    this.pump = new Thread(() -> pump(output, early, echo), "spindle-trainer-log-" + rank);
    pump.setDaemon(true);
    pump.start();
  }

  /**
   * Starts {@code python -m spindle_bridge.launch script args} with {@code env} added to this JVM's
   * environment: hands them to a {@link WarmTrainers warm interpreter} when there is one (its torch
   * already imported), else starts one.
   *
   * @throws IOException if the interpreter cannot be started (names it and the rank)
   */
  static TrainerProcess start(
      int rank,
      String python,
      String script,
      List<String> args,
      Map<String, String> env,
      boolean echo)
      throws IOException, InterruptedException {
    List<String> argv = new java.util.ArrayList<>(List.of(script));
    argv.addAll(args);
    WarmTrainers.Warm warm = WarmTrainers.take(python, env, argv);
    if (warm != null) {
      return new TrainerProcess(rank, warm.process(), warm.output(), warm.early().join(), echo);
    }
    List<String> command =
        new java.util.ArrayList<>(List.of(python, "-u", "-m", "spindle_bridge.launch"));
    command.addAll(argv);
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(env);
    try {
      Process p = pb.start();
      return new TrainerProcess(
          rank,
          p,
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)),
          List.of(),
          echo);
    } catch (IOException e) {
      throw new IOException(
          "Cannot start the trainer of rank "
              + rank
              + ": "
              + python
              + " (spark.spindle.train.python, --python) could not be run: "
              + e.getMessage(),
          e);
    }
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** The exit status (128 + N for a process killed by signal N); only once it exited. */
  int exitCode() {
    return process.exitValue();
  }

  double wallSeconds() {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  /** Waits until the trainer exits; true if it did within {@code timeout}. */
  boolean awaitExit(Duration timeout) throws InterruptedException {
    boolean done = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
    if (done) {
      pump.join(2000); // the last lines of its output
    }
    return done;
  }

  /** The last lines it printed, newest last. */
  synchronized String tail() {
    return tail.isEmpty() ? NO_OUTPUT : String.join("\n", tail);
  }

  /**
   * Asks the trainer for every thread's Python stack (SIGUSR1: the launcher's faulthandler prints
   * them) and waits a moment for them to reach {@link #tail}: the account of a hang.
   */
  void dumpStacks() {
    if (!process.isAlive()) {
      return;
    }
    try {
      new ProcessBuilder("kill", "-USR1", Long.toString(process.pid()))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .start()
          .waitFor(5, TimeUnit.SECONDS);
      Thread.sleep(1000);
    } catch (IOException e) {
      LOG.warn("Could not ask rank {}'s trainer for its stacks: {}", rank, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Kills the trainer's process group (the launcher made it the group leader) and the process
   * itself and its descendants (should it have left the group), and waits up to 10 s for it.
   */
  void kill() {
    if (process.isAlive()) {
      try {
        new ProcessBuilder("kill", "-KILL", "--", "-" + process.pid())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start()
            .waitFor(5, TimeUnit.SECONDS);
      } catch (IOException e) {
        LOG.warn(
            "Could not kill the process group of rank {}'s trainer (pid {}): {}",
            rank,
            process.pid(),
            e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    kill();
  }

  /** Passes on {@code early} (what a warm interpreter said while it imported), then its output. */
  private void pump(BufferedReader output, List<String> early, boolean echo) {
    early.forEach(line -> say(line, echo));
    try (BufferedReader in = output) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        say(line, echo);
      }
    } catch (IOException e) {
      if (process.isAlive()) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private void say(String line, boolean echo) {
    String prefixed = "[rank " + rank + "] " + line;
    if (echo) {
      System.out.println(prefixed);
      LOG.debug(prefixed);
    } else {
      LOG.info(prefixed);
    }
    synchronized (this) {
      tail.addLast(line);
      if (tail.size() > TAIL_LINES) {
        tail.removeFirst();
      }
    }
  }
}
