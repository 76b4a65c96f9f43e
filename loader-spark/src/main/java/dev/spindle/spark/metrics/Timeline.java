package dev.spindle.spark.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A job's throughput over time for its report ({@code timeline}): at most {@link #MAX_POINTS}
 * buckets of at least one second from the job's start. Each task's counts are spread evenly over
 * the time it ran. A point holds {@code t_s} (the bucket's end, seconds from the start), {@code
 * samples}, {@code bytes} and {@code quarantined} done by then, and {@code images_per_s} within the
 * bucket. Pure function; any thread.
 */
public final class Timeline {
  public static final int MAX_POINTS = 500;

  /** What one task did: samples read, images delivered, bytes read, quarantined. */
  public record Counts(long samples, long images, long bytes, long quarantined) {}

  /** One task: when it ran (epoch ms, as the scheduler saw it) and what it did. */
  public record Task(long launchMs, long finishMs, Counts counts) {}

  private Timeline() {}

  /** The points from {@code startMs} (epoch ms) to the last task's end. */
  public static List<Map<String, Object>> of(long startMs, List<Task> tasks) {
    long endMs = tasks.stream().mapToLong(Task::finishMs).max().orElse(startMs);
    long span = Math.max(1, endMs - startMs);
    long width = Math.max(1000, (span + MAX_POINTS - 1) / MAX_POINTS);
    int n = (int) Math.min(MAX_POINTS, (span + width - 1) / width);
    double[][] add = new double[n][4];
    for (Task t : tasks) {
      spread(add, startMs, width, t);
    }
    return points(add, width);
  }

  private static void spread(double[][] add, long startMs, long width, Task t) {
    Counts c = t.counts();
    long from = Math.max(t.launchMs(), startMs) - startMs;
    long to = Math.max(from + 1, t.finishMs() - startMs);
    double[] v = {c.samples(), c.images(), c.bytes(), c.quarantined()};
    for (int b = (int) (from / width); b < add.length && b * width < to; b++) {
      long overlap = Math.min(to, (b + 1) * width) - Math.max(from, b * width);
      double share = overlap / (double) (to - from);
      for (int k = 0; k < 4; k++) {
        add[b][k] += v[k] * share;
      }
    }
    // a task that ended past the last bucket (clock skew) still counts in the last one
    if (to > add.length * width) {
      double late = (to - Math.max(from, add.length * width)) / (double) (to - from);
      for (int k = 0; k < 4; k++) {
        add[add.length - 1][k] += v[k] * late;
      }
    }
  }

  private static List<Map<String, Object>> points(double[][] add, long width) {
    List<Map<String, Object>> out = new ArrayList<>();
    double samples = 0, bytes = 0, quarantined = 0;
    for (int b = 0; b < add.length; b++) {
      samples += add[b][0];
      bytes += add[b][2];
      quarantined += add[b][3];
      Map<String, Object> p = new LinkedHashMap<>();
      p.put("t_s", (b + 1) * width / 1000.0);
      p.put("samples", Math.round(samples));
      p.put("images_per_s", add[b][1] / (width / 1000.0));
      p.put("bytes", Math.round(bytes));
      p.put("quarantined", Math.round(quarantined));
      out.add(p);
    }
    return out;
  }
}
