package dev.spindle.spark.batch;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The executor JVM's one Arrow root allocator, with a byte limit; every task takes a named child
 * ({@link #child}) and closes it when done, which fails loudly if the task leaked a buffer.
 * Thread-safe. The root lives as long as the JVM.
 */
public final class ExecutorAllocator {
  private static volatile RootAllocator root;

  private ExecutorAllocator() {}

  /** The root, created on first use with {@code limitBytes} (later calls keep the first limit). */
  public static BufferAllocator root(long limitBytes) {
    RootAllocator r = root;
    if (r == null) {
      synchronized (ExecutorAllocator.class) {
        if (root == null) {
          root = new RootAllocator(limitBytes);
        }
        r = root;
      }
    }
    return r;
  }

  /** Bytes allocated from the root now (every child's included); 0 before its first use. */
  public static long allocatedBytes() {
    RootAllocator r = root;
    return r == null ? 0 : r.getAllocatedMemory();
  }

  /** A child of the root named for its owner, e.g. {@code preprocess-p3-a17}. Caller closes it. */
  public static BufferAllocator child(String name, long limitBytes) {
    return root(limitBytes).newChildAllocator(name, 0, limitBytes);
  }
}
