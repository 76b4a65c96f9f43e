package dev.spindle.spark.example;

import dev.spindle.gpu.bridge.RunToken;
import dev.spindle.gpu.feed.GpuFeeder;
import dev.spindle.spark.feed.PythonClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The example's PyTorch trainer processes, one per rank ({@code examples/fashion_mnist.py} of the
 * Python client), with their logs and JSON reports in the work directory. Owned by {@link
 * ExampleCommand}'s main thread; {@link #failFeedersOnExit} starts one daemon watcher per process.
 */
final class Trainers {
  private final List<Process> processes = new ArrayList<>();
  private final Path work;
  private final long startNanos = System.nanoTime();

  private Trainers(Path work) {
    this.work = work;
  }

  /** Starts one trainer per rank, handing each the run's {@code token} in its environment. */
  static Trainers start(ExampleCommand.Options o, Path socket, RunToken token, int port)
      throws IOException {
    Path python = PythonClient.dir();
    Trainers t = new Trainers(o.work());
    try {
      for (int r = 0; r < o.world(); r++) {
        ProcessBuilder pb = new ProcessBuilder(o.python(),
            python.resolve("examples/fashion_mnist.py").toString(),
            "--socket", socket.toString(), "--rank", Integer.toString(r),
            "--world-size", Integer.toString(o.world()), "--port", Integer.toString(port),
            "--test-dir", o.source().toString(), "--test-limit", Integer.toString(o.testLimit()),
            "--report", t.reportFile(r).toString());
        pb.environment().put("PYTHONPATH", python.toString());
        pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        pb.environment().put(RunToken.ENV, token.value());
        pb.redirectErrorStream(true).redirectOutput(o.work().resolve("trainer-" + r + ".log")
            .toFile());
        t.processes.add(pb.start());
      }
    } catch (IOException | RuntimeException e) {
      t.kill();
      throw e;
    }
    return t;
  }

  /** {@link System#nanoTime()} when the trainers were started. */
  long startNanos() {
    return startNanos;
  }

  Path reportFile(int rank) {
    return work.resolve("trainer-" + rank + ".json");
  }

  /** A trainer that exits with an error fails every feeder, so the feed job stops at once. */
  void failFeedersOnExit(Collection<GpuFeeder> feeders) {
    for (int r = 0; r < processes.size(); r++) {
      Process p = processes.get(r);
      int rank = r;
      Thread w = new Thread(() -> {
        try {
          int code = p.waitFor();
          if (code != 0) {
            IllegalStateException e = new IllegalStateException("Trainer of rank " + rank
                + " exited with " + code + ": " + tail(rank));
            feeders.forEach(f -> f.fail(e));
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "spindle-example-watch-" + r);
      w.setDaemon(true);
      w.start();
    }
  }

  /** Waits for every trainer; throws with the log tail of one that failed or hung. */
  void await(long seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    for (int r = 0; r < processes.size(); r++) {
      Process p = processes.get(r);
      if (!p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        kill();
        throw new IllegalStateException("Trainer of rank " + r + " did not finish in " + seconds
            + " s: " + tail(r));
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("Trainer of rank " + r + " exited with "
            + p.exitValue() + ": " + tail(r));
      }
    }
  }

  /** Kills every trainer and waits (10 s each at most) until it is gone and its log closed. */
  void kill() {
    processes.forEach(Process::destroyForcibly);
    for (Process p : processes) {
      try {
        p.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private String tail(int rank) {
    try {
      String log = Files.readString(work.resolve("trainer-" + rank + ".log"));
      return log.substring(Math.max(0, log.length() - 2000));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

}
