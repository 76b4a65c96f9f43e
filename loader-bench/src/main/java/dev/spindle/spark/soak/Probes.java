package dev.spindle.spark.soak;

import dev.spindle.spark.batch.ExecutorAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the soak measures, read from {@code /proc} and the JVM's management beans: a process's
 * resident memory and descriptors, and this JVM's heap, direct and Arrow bytes and threads. Linux
 * only. Any thread; stateless.
 */
final class Probes {
  /** Where {@code SharedMemoryDevice} creates (and at once unlinks) its slabs. */
  static final String SHM_PREFIX = "/dev/shm/";

  private Probes() {}

  /** Resident set of {@code pid} in bytes ({@code VmRSS}); 0 when the process is gone. */
  static long rssBytes(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
      return 0;
    } catch (IOException e) {
      return 0;
    }
  }

  /** Open file descriptors of this JVM. */
  static long openFds() {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.count();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list /proc/self/fd", e);
    }
  }

  /**
   * The {@code /dev/shm} files this JVM holds: open through a descriptor or still mapped (a slab
   * closed but not unmapped keeps its memory), by path; unlinked ones end in " (deleted)".
   */
  static Set<String> shmFiles() {
    Set<String> held = new TreeSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      fds.forEach(fd -> link(fd, held));
      for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
        int at = line.indexOf(SHM_PREFIX);
        if (at >= 0) {
          held.add(line.substring(at));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read /proc/self", e);
    }
    return held;
  }

  private static void link(Path fd, Set<String> into) {
    try {
      String target = Files.readSymbolicLink(fd).toString();
      if (target.startsWith(SHM_PREFIX)) {
        into.add(target);
      }
    } catch (IOException e) {
      // closed between the listing and the read
    }
  }

  /**
   * The heap in use right after a full collection (the live set), as the collector itself recorded
   * it: the heap read after {@code System.gc()} returns would also count what other threads
   * allocated since. Of the collectors that ran during the call, the lowest figure (the full
   * collection's, should a young one also have run); the heap read now if none reports.
   */
  static long heapAfterGc() {
    List<GarbageCollectorMXBean> beans = ManagementFactory.getGarbageCollectorMXBeans();
    long[] before = beans.stream().mapToLong(GarbageCollectorMXBean::getCollectionCount).toArray();
    System.gc();
    Set<String> heap =
        ManagementFactory.getMemoryPoolMXBeans().stream()
            .filter(p -> p.getType() == MemoryType.HEAP)
            .map(MemoryPoolMXBean::getName)
            .collect(Collectors.toSet());
    long lowest = Long.MAX_VALUE;
    for (int i = 0; i < beans.size(); i++) {
      if (beans.get(i) instanceof com.sun.management.GarbageCollectorMXBean b
          && b.getCollectionCount() > before[i]
          && b.getLastGcInfo() != null) {
        lowest =
            Math.min(
                lowest,
                b.getLastGcInfo().getMemoryUsageAfterGc().entrySet().stream()
                    .filter(e -> heap.contains(e.getKey()))
                    .mapToLong(e -> e.getValue().getUsed())
                    .sum());
      }
    }
    return lowest != Long.MAX_VALUE
        ? lowest
        : ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Bytes of the JVM's direct buffer pool (NIO direct buffers; memory-mapped ones apart). */
  static long directBytes() {
    List<BufferPoolMXBean> pools = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class);
    return pools.stream()
        .filter(p -> p.getName().equals("direct"))
        .mapToLong(BufferPoolMXBean::getMemoryUsed)
        .sum();
  }

  /** Bytes allocated from the executor's Arrow root allocator (every task's child included). */
  static long arrowBytes() {
    return ExecutorAllocator.allocatedBytes();
  }

  /** Live threads named by Spindle ("spindle-…"); the rest are Spark's, Netty's, the JDK's. */
  static long spindleThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith("spindle-"))
        .count();
  }

  /** Live threads of this JVM. */
  static long threads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }
}
