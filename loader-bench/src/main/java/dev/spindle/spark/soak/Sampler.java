package dev.spindle.spark.soak;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Takes the soak's samples on the calling thread: one at the start, one every interval, and one as
 * soon as every trainer has finished an epoch (polled every 100 ms), until the feed job ends and
 * the trainers have reported its last epoch.
 */
final class Sampler {
  /** The series, in report order. */
  static final List<String> NAMES =
      List.of(
          "jvm_rss_bytes",
          "heap_after_gc_bytes",
          "direct_bytes",
          "arrow_bytes",
          "threads",
          "spindle_threads",
          "open_fds",
          "shm_files",
          "trainer_rss_bytes");

  private final SoakTrainers trainers;
  private final long intervalNanos;
  private final long start = System.nanoTime();
  private final SoakSeries series = new SoakSeries();
  private final List<List<String>> threadNames = new ArrayList<>();

  Sampler(SoakTrainers trainers, double intervalSeconds) {
    this.trainers = trainers;
    this.intervalNanos = (long) (intervalSeconds * 1e9);
  }

  /**
   * Samples until {@code job} is done and {@code epochs} epochs were seen to end (at most 60 s
   * after the job), or the job failed.
   *
   * @throws IllegalStateException as soon as a trainer exited with an error (its output in the
   *     message), rather than waiting out the feed job's trainer timeout
   */
  void until(CompletableFuture<?> job, int epochs) throws InterruptedException, IOException {
    int seen = 0;
    long last = take(-1);
    long after = Long.MAX_VALUE;
    while (seen < epochs && System.nanoTime() < after && !job.isCompletedExceptionally()) {
      Thread.sleep(100);
      trainers.requireNoneFailed();
      int done = Math.min(trainers.epochsDone(), epochs);
      if (done > seen) {
        Map<String, Long> v = values();
        for (int e = seen; e < done; e++) {
          series.add(seconds(), e, v);
          threadNames.add(threadNames());
        }
        seen = done;
        last = System.nanoTime();
      } else if (System.nanoTime() - last >= intervalNanos) {
        last = take(-1);
      }
      if (job.isDone() && after == Long.MAX_VALUE) {
        after = System.nanoTime() + 60_000_000_000L;
      }
    }
  }

  SoakSeries series() {
    return series;
  }

  /**
   * Names of the threads alive at the end of the last epoch seen beyond those at the end of the
   * first (a name counted as often as it occurs): what the thread series' growth is made of.
   */
  List<String> threadsAdded() {
    if (threadNames.size() < 2) {
      return List.of();
    }
    List<String> added = new ArrayList<>(threadNames.get(threadNames.size() - 1));
    threadNames.get(0).forEach(added::remove);
    return added;
  }

  private static List<String> threadNames() {
    return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).sorted().toList();
  }

  private long take(int epochEnd) {
    series.add(seconds(), epochEnd, values());
    return System.nanoTime();
  }

  private double seconds() {
    return (System.nanoTime() - start) / 1e9;
  }

  private Map<String, Long> values() {
    Map<String, Long> v = new LinkedHashMap<>();
    v.put("jvm_rss_bytes", Probes.rssBytes(ProcessHandle.current().pid()));
    v.put("heap_after_gc_bytes", Probes.heapAfterGc());
    v.put("direct_bytes", Probes.directBytes());
    v.put("arrow_bytes", Probes.arrowBytes());
    v.put("threads", Probes.threads());
    v.put("spindle_threads", Probes.spindleThreads());
    v.put("open_fds", Probes.openFds());
    v.put("shm_files", (long) Probes.shmFiles().size());
    v.put("trainer_rss_bytes", trainers.rssBytes());
    return v;
  }
}
