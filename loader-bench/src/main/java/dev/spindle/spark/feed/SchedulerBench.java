package dev.spindle.spark.feed;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction1;

/**
 * {@code bin/spindle bench scheduler [--tasks 256,1024,4096] [--repeats 3] [--report FILE]}: what
 * Spark's scheduler costs a feed or train epoch as its task count grows, measured with no-op tasks
 * on embedded Spark so that only scheduling is timed. For each task count: a plain stage on {@code
 * local[2]} (the per-epoch feed job's shape) and a barrier stage whose every task calls {@code
 * barrier()} once (train's and {@code feed --serve}'s shape), on {@code local[N]} with one slot per
 * task, as a barrier stage needs. Reports the median wall time per stage and per task ({@code
 * plain_s}, {@code barrier_s}, {@code plain_ms_per_task}, {@code barrier_ms_per_task}), after one
 * warm-up stage per session. A benchmark: it reports, it asserts nothing. Driver thread.
 */
public final class SchedulerBench {
  private SchedulerBench() {}

  /** Runs every task count, prints and writes (when {@code report} is not null) the report. */
  public static void run(int[] tasks, int repeats, Path report) throws IOException {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int n : tasks) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("tasks", n);
      double plain = median(session(2), n, repeats, false);
      row.put("plain_s", plain);
      row.put("plain_ms_per_task", 1000 * plain / n);
      double barrier = median(session(n), n, repeats, true);
      row.put("barrier_s", barrier);
      row.put("barrier_ms_per_task", 1000 * barrier / n);
      System.err.println("bench scheduler: " + row);
      rows.add(row);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("benchmark", "scheduler");
    out.put("cores", Runtime.getRuntime().availableProcessors());
    out.put("repeats", repeats);
    out.put("stages", rows);
    String json =
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(out);
    System.out.println(json);
    if (report != null) {
      Files.writeString(report, json + "\n");
    }
  }

  /** The median seconds of {@code repeats} stages of {@code n} no-op tasks; stops the session. */
  private static double median(SparkSession spark, int n, int repeats, boolean barrier) {
    try {
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      List<Integer> items = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        items.add(i);
      }
      stage(jsc, items, Math.min(n, 64), barrier); // warm-up: classes loaded, executor started
      double[] s = new double[repeats];
      for (int r = 0; r < repeats; r++) {
        long start = System.nanoTime();
        stage(jsc, items, n, barrier);
        s[r] = (System.nanoTime() - start) / 1e9;
      }
      Arrays.sort(s);
      return s[repeats / 2];
    } finally {
      spark.stop();
    }
  }

  private static void stage(JavaSparkContext jsc, List<Integer> items, int tasks, boolean barrier) {
    JavaRDD<Integer> rdd = jsc.parallelize(items.subList(0, tasks), tasks);
    long count =
        barrier
            ? rdd.rdd()
                .barrier()
                .mapPartitions(
                    new Meet(), false, scala.reflect.ClassTag$.MODULE$.apply(Integer.class))
                .count()
            : rdd.count();
    if (count != tasks) {
      throw new IllegalStateException("A stage of " + tasks + " tasks counted " + count);
    }
  }

  /** A barrier task's body: meet every other task once, pass the partition on. */
  private static final class Meet extends AbstractFunction1<Iterator<Integer>, Iterator<Integer>>
      implements Serializable {
    @Override
    public Iterator<Integer> apply(Iterator<Integer> it) {
      BarrierTaskContext.get().barrier();
      return it;
    }
  }

  private static SparkSession session(int slots) {
    return SparkSession.builder()
        .master("local[" + slots + "]")
        .appName("spindle bench scheduler")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate();
  }
}
