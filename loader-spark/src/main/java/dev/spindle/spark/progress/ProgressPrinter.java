package dev.spindle.spark.progress;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkContext;

/**
 * Shows a command's progress on stderr while it runs: a live line redrawn twice a second, or a
 * plain line every {@code interval}, from a {@link ProgressListener} on the command's session.
 * Started and closed by the command's main thread; {@link #close} erases the live line, so call it
 * before printing the summary. Draws on a daemon thread of its own ({@code spindle-progress}).
 */
public final class ProgressPrinter implements AutoCloseable {
  private static final long WINDOW_NANOS = 10_000_000_000L;

  private final SparkContext sc;
  private final ProgressListener listener = new ProgressListener();
  private final PrintStream stderr;
  private final LiveStderr live;
  private final ScheduledExecutorService timer;
  private final ArrayDeque<Point> window = new ArrayDeque<>();
  private boolean closed;

  /** Shows nothing. */
  private ProgressPrinter() {
    sc = null;
    stderr = null;
    live = null;
    timer = null;
    closed = true;
  }

  private ProgressPrinter(SparkContext sc, boolean liveLine, int columns, Duration interval) {
    this.sc = sc;
    stderr = System.err;
    live = liveLine ? new LiveStderr(stderr, columns) : null;
    if (live != null) {
      System.setErr(new PrintStream(live, true));
    }
    sc.addSparkListener(listener);
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "spindle-progress");
              t.setDaemon(true);
              return t;
            });
    long period = liveLine ? 500 : Math.max(1, interval.toMillis());
    timer.scheduleAtFixedRate(this::tick, period, period, TimeUnit.MILLISECONDS);
  }

  /**
   * Starts showing progress of the jobs on {@code sc}, or nothing for {@link ProgressMode#NEVER}.
   *
   * @param terminal whether stderr is a terminal (the launcher knows; the JVM cannot tell)
   * @param columns the terminal's width, or 0 when unknown
   * @param interval how often a plain line is printed
   */
  public static ProgressPrinter start(
      SparkContext sc, ProgressMode mode, boolean terminal, int columns, Duration interval) {
    if (mode == ProgressMode.NEVER) {
      return new ProgressPrinter();
    }
    boolean liveLine = mode == ProgressMode.ALWAYS || terminal;
    return new ProgressPrinter(sc, liveLine, columns, interval);
  }

  private synchronized void tick() {
    if (closed) {
      return;
    }
    ProgressListener.Snapshot s = listener.snapshot();
    if (!s.started()) {
      return;
    }
    String line = line(s);
    try {
      if (live != null) {
        live.draw(line);
      } else {
        stderr.println(line);
      }
    } catch (IOException e) {
      closed = true; // stderr is gone: nothing left to show progress on
    }
  }

  /** One snapshot in the rate window. */
  private record Point(long nanos, ProgressListener.Snapshot snapshot) {}

  /**
   * The line for {@code s}, with rates and the bottleneck (the stage busiest over the window, else
   * over the whole job) over the last ten seconds.
   */
  private String line(ProgressListener.Snapshot s) {
    long now = System.nanoTime();
    if (!window.isEmpty() && window.peekLast().snapshot().samples() > s.samples()) {
      window.clear(); // a new job started its count afresh
    }
    window.addLast(new Point(now, s));
    while (window.size() > 2 && now - window.peekFirst().nanos() > WINDOW_NANOS) {
      window.removeFirst();
    }
    ProgressListener.Snapshot first = window.peekFirst().snapshot();
    double dt = (now - window.peekFirst().nanos()) / 1e9;
    double rate = dt > 0.2 ? (s.samples() - first.samples()) / dt : Double.NaN;
    double bytes = dt > 0.2 ? (s.bytes() - first.bytes()) / dt : Double.NaN;
    String bottleneck = StageTimes.busiest(StageTimes.minus(s.stages(), first.stages()));
    return ProgressLine.format(
        s, rate, bytes, bottleneck != null ? bottleneck : StageTimes.busiest(s.stages()));
  }

  /**
   * Stops: draws the live line a last time once the listener has caught up with the job's end (at
   * most a second), erases it, and gives stderr back.
   */
  @Override
  public void close() {
    if (sc == null) {
      return;
    }
    timer.shutdownNow();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
      finish();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      // stderr is gone: nothing to erase
    } finally {
      if (live != null) {
        System.setErr(stderr);
      }
      sc.removeSparkListener(listener);
    }
  }

  private synchronized void finish() throws IOException, InterruptedException {
    if (live != null && !closed) {
      long deadline = System.nanoTime() + 1_000_000_000L;
      ProgressListener.Snapshot s = listener.snapshot();
      while (s.started() && s.samples() < s.total() && System.nanoTime() < deadline) {
        Thread.sleep(20); // the listener bus delivers the last task ends a little later
        s = listener.snapshot();
      }
      if (s.started()) {
        live.draw(line(s));
      }
      live.erase();
    }
    closed = true;
  }
}
