package dev.spindle.spark.soak;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a soak left behind once its session was stopped: Arrow bytes still allocated, {@code
 * /dev/shm} files still open or mapped, files left in the bridge's socket folder, and threads
 * started since the soak began that are still alive. Main thread.
 */
final class EndState {
  /**
   * Threads that live as long as the JVM by design, created once and bounded, so not stray: the
   * shared pipeline CPU pool ({@code ExecutorPools.shared()}, fixed size), its elastic I/O pool
   * (idle threads exit after 30 s), its one scheduler thread (the pipelines' periodic counts, which
   * feed tasks report as samples are decoded), the range-read pool of indexed tar shards ({@code
   * spark.spindle.io.concurrency} threads at most, idle ones exit after 30 s), JavaCPP's one
   * deallocator thread (OpenCV's decoder), and the JDK's process reaper (a cached pool for child
   * processes, idle threads exit after 60 s).
   */
  private static final Pattern JVM_LIFETIME =
      Pattern.compile("spindle-(cpu|io|stats|range)-\\d+|JavaCPP Deallocator|process reaper");

  /** How long stopped threads get to finish before they count as stray. */
  private static final long SETTLE_NANOS = 10_000_000_000L;

  /** The threads alive before the soak started (the JVM's own, the launcher's). */
  record Baseline(Set<Long> threadIds) {}

  private EndState() {}

  static Baseline baseline() {
    return new Baseline(
        Thread.getAllStackTraces().keySet().stream()
            .map(Thread::getId)
            .collect(Collectors.toSet()));
  }

  /**
   * {@code arrow_bytes}, {@code shm_files}, {@code socket_files} (counts), {@code threads} (the
   * stray ones' count) and {@code stray_threads}, {@code shm_paths}, {@code socket_paths} (their
   * names), and {@code jvm_lifetime_threads} (started during the soak, meant to stay: {@link
   * #JVM_LIFETIME}), measured after a full collection and after waiting up to 10 s for threads that
   * are ending.
   */
  static Map<String, Object> measure(Baseline baseline, Path socketDir)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + SETTLE_NANOS;
    List<String> started = started(baseline);
    while (started.stream().anyMatch(EndState::stray) && System.nanoTime() < deadline) {
      Thread.sleep(200);
      started = started(baseline);
    }
    List<String> stray = started.stream().filter(EndState::stray).toList();
    System.gc();
    Set<String> shm = Probes.shmFiles();
    List<String> sockets = socketFiles(socketDir);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("arrow_bytes", Probes.arrowBytes());
    m.put("shm_files", shm.size());
    m.put("socket_files", sockets.size());
    m.put("threads", stray.size());
    m.put("stray_threads", stray);
    m.put("jvm_lifetime_threads", started.stream().filter(n -> !stray(n)).toList());
    m.put("shm_paths", List.copyOf(shm));
    m.put("socket_paths", sockets);
    return m;
  }

  private static boolean stray(String thread) {
    return !JVM_LIFETIME.matcher(thread).matches();
  }

  private static List<String> started(Baseline baseline) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && !baseline.threadIds().contains(t.getId()))
        .map(Thread::getName)
        .sorted()
        .toList();
  }

  private static List<String> socketFiles(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(Path::toString).sorted().toList();
    }
  }
}
