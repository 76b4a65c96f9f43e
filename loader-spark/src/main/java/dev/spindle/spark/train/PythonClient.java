package dev.spindle.spark.train;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

/**
 * Where the Python client ({@code loader-gpu/python}, package {@code spindle_bridge}) is, and
 * whether a trainers' Python can run it. Stateless; any thread.
 */
public final class PythonClient {
  private static final String IMPORTS = "import numpy, torch, spindle_bridge";

  private PythonClient() {}

  /**
   * Fails unless {@code python} imports torch, numpy and the client ({@link #dir} on its {@code
   * PYTHONPATH}, as trainers get it), naming the interpreter and the last line it printed: without
   * this a missing torch shows only once Spark has started, as every rank's failure. For masters
   * whose executors run on this machine ({@code local}, {@code local-cluster}).
   *
   * @throws IllegalArgumentException if it cannot, saying to pass {@code --python}
   */
  public static void requireImports(String python) {
    startImportCheck(python).await();
  }

  /**
   * {@link #requireImports} on a thread of its own, so that the interpreter's start and torch's
   * import (about a second) overlap Spark's start instead of coming before it; {@link
   * ImportCheck#await} gives the verdict.
   */
  public static ImportCheck startImportCheck(String python) {
    FutureTask<Void> task =
        new FutureTask<>(
            () -> {
              checkImports(python);
              return null;
            });
    Thread t = new Thread(task, "spindle-python-check");
    t.setDaemon(true);
    t.start();
    return new ImportCheck(task);
  }

  /** A running {@link #startImportCheck}. */
  public static final class ImportCheck {
    private final FutureTask<Void> task;

    ImportCheck(FutureTask<Void> task) {
      this.task = task;
    }

    /**
     * Waits for the check.
     *
     * @throws IllegalArgumentException as {@link #requireImports} does
     */
    public void await() {
      try {
        task.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while checking the trainers' Python", e);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof RuntimeException r) {
          throw r;
        }
        throw new IllegalStateException(e.getCause());
      }
    }
  }

  private static void checkImports(String python) {
    ProcessBuilder pb = new ProcessBuilder(python, "-c", IMPORTS).redirectErrorStream(true);
    pb.environment().put("PYTHONPATH", pythonPath());
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw cannotRun(python, e);
    }
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        throw new IllegalArgumentException(
            "'" + python + " -c \"" + IMPORTS + "\"' did not finish in 120 s");
      }
      if (p.exitValue() != 0) {
        throw cannotImport(
            python,
            out.isEmpty() ? "exit " + p.exitValue() : out.lines().reduce((a, b) -> b).orElse(""));
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "Cannot read what '" + python + "' printed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while checking '" + python + "'", e);
    } finally {
      p.destroyForcibly();
    }
  }

  /** {@link #dir} first, then this JVM's own {@code PYTHONPATH}: what trainers' Pythons get. */
  static String pythonPath() {
    String path = System.getenv("PYTHONPATH");
    return dir() + (path == null || path.isEmpty() ? "" : ":" + path);
  }

  /** The verdict on a trainers' Python that could not be run at all. */
  static IllegalArgumentException cannotRun(String python, IOException e) {
    return new IllegalArgumentException(
        "Cannot run the trainers' Python '"
            + python
            + "' ("
            + e.getMessage()
            + "); pass --python EXE",
        e);
  }

  /** The verdict on a trainers' Python whose imports failed, {@code last} the last line it said. */
  static IllegalArgumentException cannotImport(String python, String last) {
    return new IllegalArgumentException(
        "The trainers' Python '"
            + python
            + "' cannot import torch, numpy and the Spindle client spindle_bridge ("
            + last
            + "); pass --python EXE with one that can (Debian's python3-torch: --python"
            + " /usr/bin/python3)");
  }

  /**
   * {@code loader-gpu/python} under the working directory or one of its parents, or under the
   * Spindle jar's ({@code spindle.app.jar}).
   *
   * @throws IllegalStateException if there is none
   */
  public static Path dir() {
    List<Path> starts = new ArrayList<>();
    starts.add(Path.of("").toAbsolutePath());
    String jar = System.getProperty("spindle.app.jar");
    if (jar != null) {
      starts.add(Path.of(jar).toAbsolutePath());
    }
    for (Path s : starts) {
      for (Path d = s; d != null; d = d.getParent()) {
        Path candidate = d.resolve("loader-gpu/python");
        if (Files.isDirectory(candidate.resolve("spindle_bridge"))) {
          return candidate;
        }
      }
    }
    throw new IllegalStateException(
        "Cannot find loader-gpu/python (the Python client) above "
            + starts
            + "; run from the Spindle checkout");
  }
}
