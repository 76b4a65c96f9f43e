package dev.spindle.spark.soak;

import dev.spindle.spark.train.PythonClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The soak's trainer processes, one per rank ({@code soak_trainer.py} on {@code python}), each
 * appending a line to its marker file after each epoch. Started and read by the soak's main thread,
 * which owns them: {@link #close()} kills any still running.
 */
final class SoakTrainers implements AutoCloseable {
  private final List<Process> processes = new ArrayList<>();
  private final List<Path> markers = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();

  /** Starts {@code world} trainers of the run with {@code token} on {@code socket}. */
  SoakTrainers(String python, Path socket, String token, int world, int epochs, Path dir)
      throws IOException {
    Path script = dir.resolve("soak_trainer.py");
    try (InputStream in = SoakTrainers.class.getResourceAsStream("soak_trainer.py")) {
      Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
    }
    try {
      for (int rank = 0; rank < world; rank++) {
        markers.add(Files.createFile(dir.resolve("epochs-rank" + rank + ".txt")));
        logs.add(dir.resolve("trainer-rank" + rank + ".log"));
        ProcessBuilder pb =
            new ProcessBuilder(
                    python,
                    script.toString(),
                    socket.toString(),
                    Integer.toString(rank),
                    Integer.toString(world),
                    Integer.toString(epochs),
                    markers.get(rank).toString())
                .redirectErrorStream(true)
                .redirectOutput(logs.get(rank).toFile());
        pb.environment().put("PYTHONPATH", PythonClient.dir().toString());
        pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        pb.environment().put("SPINDLE_RUN_TOKEN", token);
        processes.add(pb.start());
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Epochs every trainer has finished (the fewest of any rank). */
  int epochsDone() {
    int done = Integer.MAX_VALUE;
    for (Path m : markers) {
      try {
        done =
            Math.min(
                done,
                (int) Files.readAllLines(m).stream().filter(l -> l.startsWith("END ")).count());
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the soak trainer's marker file " + m, e);
      }
    }
    return done;
  }

  /**
   * Throws when a trainer has exited with an error.
   *
   * @throws IllegalStateException naming the rank, its exit status and its output
   */
  void requireNoneFailed() throws IOException {
    for (int rank = 0; rank < processes.size(); rank++) {
      Process p = processes.get(rank);
      if (!p.isAlive() && p.exitValue() != 0) {
        throw failed(rank, "exited " + p.exitValue());
      }
    }
  }

  /** Resident bytes of every trainer still running. */
  long rssBytes() {
    return processes.stream()
        .filter(Process::isAlive)
        .mapToLong(p -> Probes.rssBytes(p.pid()))
        .sum();
  }

  /**
   * Waits up to {@code seconds} for every trainer to exit.
   *
   * @throws IllegalStateException naming the rank and its output when one failed or hangs
   */
  void awaitExit(int seconds) throws InterruptedException, IOException {
    for (int rank = 0; rank < processes.size(); rank++) {
      Process p = processes.get(rank);
      if (!p.waitFor(seconds, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw failed(
            rank,
            p.isAlive() ? "did not exit within " + seconds + " s" : "exited " + p.exitValue());
      }
    }
  }

  private IllegalStateException failed(int rank, String how) throws IOException {
    return new IllegalStateException(
        "Soak trainer of rank "
            + rank
            + " "
            + how
            + "; its output ("
            + logs.get(rank)
            + "):\n"
            + Files.readString(logs.get(rank)));
  }

  /** Kills trainers still running. Idempotent. */
  @Override
  public void close() {
    processes.forEach(Process::destroyForcibly);
  }
}
