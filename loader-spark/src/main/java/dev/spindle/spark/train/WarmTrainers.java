package dev.spindle.spark.train;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Trainers' interpreters started before their ranks are known, so that {@code import torch} (about
 * a second of a cold start) overlaps Spark's start instead of coming after the rank's task began:
 * {@code PYTHON -u -m spindle_bridge.launch --warm} imports numpy, torch and the client, says it is
 * ready, and waits for one line on stdin naming its environment and script ({@link
 * TrainerProcess#start} hands it over). For masters whose executor is this JVM ({@code local}):
 * {@code bin/spindle train} starts one per rank beside Spark's start, and the first one's readiness
 * is the check of the trainers' Python ({@link PythonClient#requireImports}'s verdict, same
 * message). An interpreter not taken by the end of the command is stopped ({@link #stopAll}); one
 * whose JVM died kills itself (the launcher watches its parent). A trainer restarted after a
 * failure starts cold. Any thread.
 */
public final class WarmTrainers {
  private static final Logger LOG = LoggerFactory.getLogger(WarmTrainers.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String READY = "spindle-warm: ready";
  private static final Deque<Warm> POOL = new ArrayDeque<>();

  /** How long {@link #take} waits for an interpreter still importing. */
  private static final long TAKE_WAIT_S = 120;

  private WarmTrainers() {}

  /**
   * One warm interpreter: its process, its output read up to its ready line ({@code early}: the
   * lines before it, e.g. warnings of the imports), the {@code PYTHONPATH} it started with.
   */
  record Warm(
      String python,
      String pythonPath,
      Process process,
      BufferedReader output,
      CompletableFuture<List<String>> early) {}

  /**
   * Starts {@code count} warm interpreters of {@code python} and returns the check of the first
   * one: it fails as {@link PythonClient#requireImports} does when the interpreter cannot start or
   * exits before it is ready (the other interpreters are then stopped).
   */
  public static PythonClient.ImportCheck start(String python, int count) {
    String pythonPath = PythonClient.pythonPath();
    List<Warm> started = new ArrayList<>();
    IllegalArgumentException failed = null;
    for (int i = 0; i < count && failed == null; i++) {
      try {
        started.add(launch(python, pythonPath));
      } catch (IllegalArgumentException e) {
        failed = e;
      }
    }
    synchronized (POOL) {
      POOL.addAll(started);
    }
    IllegalArgumentException cannotStart = failed;
    FutureTask<Void> check =
        new FutureTask<>(
            () -> {
              if (cannotStart != null) {
                stopAll();
                throw cannotStart;
              }
              try {
                started.get(0).early().get();
              } catch (ExecutionException e) {
                stopAll();
                throw (IllegalArgumentException) e.getCause();
              }
              return null;
            });
    Thread t = new Thread(check, "spindle-python-check");
    t.setDaemon(true);
    t.start();
    return new PythonClient.ImportCheck(check);
  }

  private static Warm launch(String python, String pythonPath) {
    ProcessBuilder pb =
        new ProcessBuilder(python, "-u", "-m", "spindle_bridge.launch", "--warm")
            .redirectErrorStream(true);
    pb.environment().put("PYTHONPATH", pythonPath);
    pb.environment().put("PYTHONUNBUFFERED", "1");
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw PythonClient.cannotRun(python, e);
    }
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<List<String>> early = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              List<String> lines = new ArrayList<>();
              try {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                  if (line.equals(READY)) {
                    early.complete(lines);
                    return;
                  }
                  lines.add(line);
                }
                p.waitFor(10, TimeUnit.SECONDS);
              } catch (IOException e) {
                lines.add(e.toString());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              String last = lines.isEmpty() ? "exit " + exitOf(p) : lines.get(lines.size() - 1);
              early.completeExceptionally(PythonClient.cannotImport(python, last));
            },
            "spindle-python-warm");
    reader.setDaemon(true);
    reader.start();
    return new Warm(python, pythonPath, p, out, early);
  }

  private static String exitOf(Process p) {
    return p.isAlive() ? "still running" : Integer.toString(p.exitValue());
  }

  /**
   * A warm interpreter of {@code python} that started with {@code env}'s {@code PYTHONPATH}, ready
   * (waiting for it while it imports), handed {@code env} and {@code argv} (SCRIPT, ARGS...): from
   * here it runs the script as a cold start of the launcher would. Null when there is none, or the
   * one taken failed (it is stopped): the caller starts a trainer cold.
   */
  static Warm take(String python, Map<String, String> env, List<String> argv)
      throws InterruptedException {
    Warm w;
    synchronized (POOL) {
      w = POOL.peekFirst();
      if (w == null
          || !w.python().equals(python)
          || !w.pythonPath().equals(env.get("PYTHONPATH"))) {
        return null;
      }
      POOL.removeFirst();
    }
    try {
      w.early().get(TAKE_WAIT_S, TimeUnit.SECONDS);
      Map<String, Object> start = new LinkedHashMap<>();
      start.put("env", env);
      start.put("argv", argv);
      try (OutputStream in = w.process().getOutputStream()) {
        in.write((line(start) + "\n").getBytes(StandardCharsets.UTF_8));
      }
      return w;
    } catch (ExecutionException | TimeoutException | IOException e) {
      LOG.debug(
          "A warm trainer interpreter could not be used ({}): starting one cold", e.toString());
      w.process().destroyForcibly();
      return null;
    }
  }

  private static String line(Map<String, Object> start) {
    try {
      return JSON.writeValueAsString(start);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Stops every interpreter not taken (at the end of the command that started them). */
  public static void stopAll() {
    List<Warm> left;
    synchronized (POOL) {
      left = new ArrayList<>(POOL);
      POOL.clear();
    }
    for (Warm w : left) {
      try {
        w.process().getOutputStream().close(); // end of input: it exits 0
      } catch (IOException e) {
        // it has gone already
      }
      w.process().destroyForcibly();
    }
  }
}
