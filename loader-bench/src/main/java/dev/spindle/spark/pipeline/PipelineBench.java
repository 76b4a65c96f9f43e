package dev.spindle.spark.pipeline;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/spindle bench pipeline [--report FILE] [--items N] [--max-threads N] [--stages N]
 * [--repeats N]}: measures the engine's own cost. (1) Handoff: the time per item per stage of a
 * chain of no-op stages, minus a source-to-consumer baseline, median of the repeats, for stage
 * concurrency 1 and 4. (2) Scaling: items/s of one CPU-bound stage with 1..N threads (pool size and
 * concurrency both N), with the cores the OS actually gave each run (process CPU time over wall
 * time). Prints a table and writes a JSON report with {@code handoff_us_per_item} (the
 * concurrency-1 median, the worst case: every item pays a full hand-off) and {@code scaling}. A
 * benchmark, not a test: it asserts nothing. Runs on private pools, so it needs no Spark.
 */
public final class PipelineBench {
  private final int items;
  private final int maxThreads;
  private final int stages;
  private final int repeats;

  private PipelineBench(int items, int maxThreads, int stages, int repeats) {
    this.items = items;
    this.maxThreads = maxThreads;
    this.stages = stages;
    this.repeats = repeats;
  }

  /**
   * Runs the benchmark on the calling thread (plus private pools); prints a table and, when {@code
   * report} is not null, writes the JSON report there. Every count must be > 0 ({@code bin/ spindle
   * bench pipeline} checks the flags).
   */
  public static void run(int items, int maxThreads, int stages, int repeats, File report)
      throws IOException {
    if (items <= 0 || maxThreads <= 0 || stages <= 0 || repeats <= 0) {
      throw new IllegalArgumentException(
          "Invalid bench settings: items "
              + items
              + ", threads "
              + maxThreads
              + ", stages "
              + stages
              + ", repeats "
              + repeats
              + " (all must be > 0)");
    }
    Map<String, Object> json = new PipelineBench(items, maxThreads, stages, repeats).run();
    if (report != null) {
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(report, json);
      System.out.println("report: " + report);
    }
  }

  private Map<String, Object> run() {
    Map<String, Object> report = new LinkedHashMap<>();
    report.put("benchmark", "pipeline");
    report.put("cores", Runtime.getRuntime().availableProcessors());
    report.put("java", System.getProperty("java.version"));
    report.put("items", items);
    report.put("stages", stages);
    List<Map<String, Object>> handoff = new ArrayList<>();
    System.out.printf(
        "handoff: %d items through %d no-op stages, median of %d%n", items, stages, repeats);
    for (int concurrency : new int[] {1, 4}) {
      handoff.add(handoff(concurrency));
    }
    report.put("handoff_us_per_item", handoff.get(0).get("us_per_item_per_stage"));
    report.put("handoff", handoff);
    report.put("scaling", scaling());
    return report;
  }

  private Map<String, Object> handoff(int concurrency) {
    double[] perItem = new double[repeats];
    try (ExecutorPools pools = ExecutorPools.create("bench", maxThreads)) {
      timeChain(pools, 0, concurrency); // warm-up
      timeChain(pools, stages, concurrency);
      for (int r = 0; r < repeats; r++) {
        long base = timeChain(pools, 0, concurrency);
        long chain = timeChain(pools, stages, concurrency);
        perItem[r] = Math.max(0, chain - base) / 1e3 / items / stages;
      }
    }
    double median = median(perItem);
    System.out.printf(
        "  concurrency %d: %.2f us per item per stage (runs %s)%n",
        concurrency, median, Arrays.toString(round(perItem)));
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("concurrency", concurrency);
    m.put("us_per_item_per_stage", median);
    m.put("runs", round(perItem));
    return m;
  }

  private long timeChain(ExecutorPools pools, int n, int concurrency) {
    PipelineBuilder<Integer> b =
        Pipeline.source("read", counting(items)).pools(pools).queueItems(256);
    for (int s = 0; s < n; s++) {
      b = b.pipe("noop-" + s, (Integer x) -> x, concurrency, Order.INPUT);
    }
    long t0 = System.nanoTime();
    long sum = 0;
    try (PipelineIterator<Integer> it = b.build().start()) {
      while (it.hasNext()) {
        sum += it.next();
      }
    }
    long elapsed = System.nanoTime() - t0;
    if (sum != (long) items * (items - 1) / 2) {
      throw new IllegalStateException("Pipeline lost items: checksum " + sum);
    }
    return elapsed;
  }

  private List<Map<String, Object>> scaling() {
    long spins = calibrate();
    int n = Math.max(maxThreads * 50, Math.min(items, 10_000));
    System.out.printf("scaling: %d items of ~200 us CPU work each (%d spins)%n", n, spins);
    List<Map<String, Object>> rows = new ArrayList<>();
    double single = 0;
    for (int t = 1; t <= maxThreads; t++) {
      long cpu0 = processCpuNanos();
      long wall0 = System.nanoTime();
      double perSecond = scale(t, n, spins);
      double coresUsed = (processCpuNanos() - cpu0) / (double) (System.nanoTime() - wall0);
      single = t == 1 ? perSecond : single;
      System.out.printf(
          "  threads %2d: %8.0f items/s  (x%.2f)  cores obtained %.2f"
              + "  items per CPU-second %.0f%n",
          t, perSecond, perSecond / single, coresUsed, perSecond / coresUsed);
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("threads", t);
      row.put("items_per_s", perSecond);
      row.put("speedup", perSecond / single);
      row.put("cores_used", coresUsed);
      row.put("items_per_cpu_s", perSecond / coresUsed);
      rows.add(row);
    }
    return rows;
  }

  private double scale(int threads, int n, long spins) {
    try (ExecutorPools pools = ExecutorPools.create("bench-scale", threads)) {
      long t0 = System.nanoTime();
      long count = 0;
      try (PipelineIterator<Long> it =
          Pipeline.source("read", counting(n))
              .pools(pools)
              .pipe("cpu", (Integer x) -> spin(spins), threads, Order.INPUT)
              .build()
              .start()) {
        while (it.hasNext()) {
          it.next();
          count++;
        }
      }
      return count / ((System.nanoTime() - t0) / 1e9);
    }
  }

  /** CPU time of this JVM so far: shows how many cores the OS actually gave a run. */
  private static long processCpuNanos() {
    java.lang.management.OperatingSystemMXBean os =
        java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : 0;
  }

  /** Spins so that one call costs about 200 us on this machine (after JIT warm-up). */
  private static long calibrate() {
    long spins = 20_000;
    long sink = 0;
    long warmUntil = System.nanoTime() + 300_000_000L;
    while (System.nanoTime() < warmUntil) {
      sink += spin(spins);
    }
    long t0 = System.nanoTime();
    for (int i = 0; i < 50; i++) {
      sink += spin(spins);
    }
    double nsPerSpin = (System.nanoTime() - t0) / (spins * 50.0);
    return Math.max(1, (long) (200_000 / nsPerSpin) + (sink & 1));
  }

  /** Pure CPU work the JIT cannot remove: a xorshift chain. */
  static long spin(long n) {
    long x = n | 1;
    for (long i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
    }
    return x;
  }

  private static Iterator<Integer> counting(int n) {
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < n;
      }

      @Override
      public Integer next() {
        return next++;
      }
    };
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static double[] round(double[] v) {
    return Arrays.stream(v).map(x -> Math.round(x * 100) / 100.0).toArray();
  }
}
