package dev.spindle.spark.pipeline;

import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;

/**
 * The threads pipelines run on: a fixed CPU pool sized to the executor's cores for ops, an elastic
 * I/O pool for sources and I/O ops (idle threads exit after 30 s), and one scheduler thread for
 * periodic statistics. All threads are daemons named "{prefix}-cpu-N", "{prefix}-io-N" and
 * "{prefix}-stats".
 *
 * <p>{@link #shared()} is the JVM-wide instance every pipeline uses by default, so Spark tasks
 * running at once in one executor share one CPU pool; its size is, in order: {@code
 * spark.spindle.threads}, {@code spark.executor.cores}, N of a {@code local[N]} master, else the
 * JVM's available processors. It lives as long as the JVM ({@code close()} on it does nothing).
 * {@link #create} makes a private instance (benchmarks, tests) that its creator closes. Any thread.
 */
public final class ExecutorPools implements AutoCloseable {
  /**
   * Spark configuration key that overrides the CPU pool size (0 = the executor's cores): the key
   * registry's {@code SpindleConfig.THREADS}, spelled here because the engine sits below the
   * registry (which parses the engine's own types) and the JVM-wide pool is created lazily, in
   * executors, where no parsed settings reach it. PipelineLifecycleSuite checks the two agree.
   */
  public static final String CPU_THREADS_KEY = "spark.spindle.threads";

  private static volatile ExecutorPools shared;

  private final int cpuThreads;
  private final boolean isShared;
  private final ThreadPoolExecutor cpu;
  private final ThreadPoolExecutor io;
  private final ScheduledThreadPoolExecutor scheduler;

  private ExecutorPools(String prefix, int cpuThreads, boolean isShared) {
    if (cpuThreads <= 0) {
      throw new IllegalArgumentException(
          "Invalid CPU thread count: " + cpuThreads + " (must be > 0)");
    }
    this.cpuThreads = cpuThreads;
    this.isShared = isShared;
    this.cpu =
        new ThreadPoolExecutor(
            cpuThreads,
            cpuThreads,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            daemons(prefix + "-cpu-"));
    this.io =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            daemons(prefix + "-io-"));
    this.scheduler = new ScheduledThreadPoolExecutor(1, daemons(prefix + "-stats-"));
    scheduler.setRemoveOnCancelPolicy(true);
  }

  /** The JVM-wide pools, created on first use. */
  public static ExecutorPools shared() {
    ExecutorPools p = shared;
    if (p == null) {
      synchronized (ExecutorPools.class) {
        p = shared;
        if (p == null) {
          p = new ExecutorPools("spindle", detectCpuThreads(), true);
          shared = p;
        }
      }
    }
    return p;
  }

  /** Private pools with {@code cpuThreads} CPU threads; the caller closes them. */
  public static ExecutorPools create(String prefix, int cpuThreads) {
    return new ExecutorPools(prefix, cpuThreads, false);
  }

  /** Size of the CPU pool. */
  public int cpuThreads() {
    return cpuThreads;
  }

  ThreadPoolExecutor cpu() {
    return cpu;
  }

  ThreadPoolExecutor io() {
    return io;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /** Threads of the CPU pool running a task now. */
  public int cpuActive() {
    return cpu.getActiveCount();
  }

  /** Threads of the I/O pool running a task now. */
  public int ioActive() {
    return io.getActiveCount();
  }

  /** Stops a private instance's threads (running tasks finish); does nothing on the shared one. */
  @Override
  public void close() {
    if (!isShared) {
      scheduler.shutdownNow();
      cpu.shutdown();
      io.shutdown();
    }
  }

  static int detectCpuThreads() {
    int fallback = Runtime.getRuntime().availableProcessors();
    try {
      SparkEnv env = SparkEnv.get();
      return env == null ? fallback : fromConf(env.conf(), fallback);
    } catch (NoClassDefFoundError noSpark) {
      return fallback;
    }
  }

  static int fromConf(SparkConf conf, int fallback) {
    if (conf.contains(CPU_THREADS_KEY) && conf.getInt(CPU_THREADS_KEY, 0) > 0) {
      return conf.getInt(CPU_THREADS_KEY, fallback);
    }
    if (conf.contains("spark.executor.cores")) {
      return conf.getInt("spark.executor.cores", fallback);
    }
    return localCores(conf.get("spark.master", ""), fallback);
  }

  /** N of "local[N]" or "local[N,F]"; the fallback for "local[*]" and anything else. */
  static int localCores(String master, int fallback) {
    if (master.equals("local")) {
      return 1;
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("local\\[(\\d+)(,\\d+)?]").matcher(master);
    return m.matches() ? Math.max(1, Integer.parseInt(m.group(1))) : fallback;
  }

  /** Daemon threads named {@code prefix} and a number from 0. */
  public static ThreadFactory daemons(String prefix) {
    AtomicInteger n = new AtomicInteger();
    ThreadFactory base = Executors.defaultThreadFactory();
    return r -> {
      Thread t = base.newThread(r);
      t.setName(prefix + n.getAndIncrement());
      t.setDaemon(true);
      return t;
    };
  }
}
