package dev.spindle.spark.job;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The executor JVM's shared decode pool: one per JVM, sized once, shared by every task running in
 * it, so two concurrent tasks never start two pools. Daemon threads named {@code spindle-decode-N}.
 */
public final class DecodeThreads {
  private static volatile ExecutorService pool;
  private static volatile int size;

  private DecodeThreads() {}

  /** The pool; {@code threads <= 0} means one thread per available core. */
  public static ExecutorService get(int threads) {
    ExecutorService p = pool;
    if (p == null) {
      synchronized (DecodeThreads.class) {
        if (pool == null) {
          size = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
          AtomicInteger n = new AtomicInteger();
          pool =
              Executors.newFixedThreadPool(
                  size,
                  r -> {
                    Thread t = new Thread(r, "spindle-decode-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                  });
        }
        p = pool;
      }
    }
    return p;
  }

  public static int size() {
    return size;
  }
}
