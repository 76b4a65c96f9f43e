package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.deploy.SparkHadoopUtil;

/**
 * A Hadoop {@link Configuration} that travels to executors inside a task; and, before any
 * SparkSession exists, the configuration its SparkContext will have ({@link #beforeSession}).
 *
 * <p>A task carries it in full (every property, over 100 KB with Hadoop's defaults), which Spark
 * serializes twice on the driver (its closure check, then the task binary) and reads once more per
 * task on an executor. Under a local master the executor is the driver's JVM, so {@link #of} makes
 * one that travels as a number naming the driver's own configuration object instead (what the task
 * would have read equals it; tasks only read it).
 */
public final class HadoopConf implements Serializable {
  /** Configurations handed to tasks of a local master, by number ({@link #of}). */
  private static final Map<Long, WeakReference<Configuration>> LOCAL = new ConcurrentHashMap<>();

  /** Each local configuration's number in {@link #LOCAL}: one per object, however often shipped. */
  private static final Map<Configuration, Long> NUMBERS = new WeakHashMap<>();

  private static final AtomicLong NEXT = new AtomicLong();

  private transient Configuration conf;

  /** The number of {@link #conf} in {@link #LOCAL}, or -1: written in full. */
  private transient long local = -1;

  public HadoopConf(Configuration conf) {
    this.conf = conf;
  }

  private HadoopConf(Configuration conf, long local) {
    this.conf = conf;
    this.local = local;
  }

  /**
   * {@code sc}'s Hadoop configuration, for its tasks: in full, or under a local master (where every
   * task runs in this JVM) by reference.
   */
  public static HadoopConf of(SparkContext sc) {
    Configuration conf = sc.hadoopConfiguration();
    return sc.isLocal() ? new HadoopConf(conf, number(conf)) : new HadoopConf(conf);
  }

  private static long number(Configuration conf) {
    synchronized (NUMBERS) {
      Long n = NUMBERS.get(conf);
      if (n == null) {
        LOCAL.values().removeIf(r -> r.get() == null);
        n = NEXT.getAndIncrement();
        NUMBERS.put(conf, n);
        LOCAL.put(n, new WeakReference<>(conf));
      }
      return n;
    }
  }

  /**
   * The Hadoop configuration a SparkContext started with {@code spark} gets ({@code spark.hadoop.*}
   * keys, S3 credentials from the environment, {@code core-site.xml} and {@code hive-site.xml} on
   * the classpath), for checks of paths on the driver before the session starts: they then see the
   * file systems the job will see. Built by Spark's own {@code SparkHadoopUtil}, as the
   * SparkContext builds its configuration, so the two cannot drift apart.
   */
  public static Configuration beforeSession(SparkConf spark) {
    return SparkHadoopUtil.get().newConfiguration(spark);
  }

  public Configuration get() {
    return conf;
  }

  private void writeObject(ObjectOutputStream out) throws IOException {
    out.writeLong(local);
    if (local < 0) {
      conf.write(out);
    }
  }

  private void readObject(ObjectInputStream in) throws IOException {
    local = in.readLong();
    if (local < 0) {
      conf = new Configuration(false);
      conf.readFields(in);
      return;
    }
    WeakReference<Configuration> ref = LOCAL.get(local);
    conf = ref == null ? null : ref.get();
    if (conf == null) {
      throw new IOException(
          "Hadoop configuration "
              + local
              + " of a local master is not in this JVM: it was shipped to a task of another"
              + " process, or its SparkContext is gone");
    }
  }
}
