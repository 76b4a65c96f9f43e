package dev.spindle.spark.shard;

import dev.spindle.spark.pipeline.ExecutorPools;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The executor's threads for ranged reads of shards ({@link IndexedTarReader}): as many as {@code
 * spark.spindle.io.concurrency}, so that bound is the pool's size and no thread ever waits for a
 * permit; the tasks of every Spark task in the executor JVM queue on it in order. A range read
 * never waits on another task of the pool, so it cannot deadlock. Threads are daemons named {@code
 * spindle-range-N} and exit after 30 s idle, so an executor that reads no indexed tar holds none;
 * the pool lives as long as the JVM, like {@link ExecutorPools#shared()}. Any thread.
 */
final class RangeReadPool {
  private static final ThreadPoolExecutor POOL = create();

  private RangeReadPool() {}

  private static ThreadPoolExecutor create() {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            16,
            16,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            ExecutorPools.daemons("spindle-range-"));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** The pool, sized to {@code concurrency} (the last size asked for wins: one job's setting). */
  static synchronized Executor sized(int concurrency) {
    if (POOL.getMaximumPoolSize() < concurrency) {
      POOL.setMaximumPoolSize(concurrency);
      POOL.setCorePoolSize(concurrency);
    } else if (POOL.getMaximumPoolSize() > concurrency) {
      POOL.setCorePoolSize(concurrency);
      POOL.setMaximumPoolSize(concurrency);
    }
    return POOL;
  }

  /** Threads reading now, for tests. */
  static int active() {
    return POOL.getActiveCount();
  }
}
