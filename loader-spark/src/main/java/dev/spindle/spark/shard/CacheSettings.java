package dev.spindle.spark.shard;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.function.Function;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.util.Utils;

/**
 * The shard cache's settings as an executor sees them in its Spark configuration. The keys are the
 * registry's ({@code SpindleConfig.IO_CACHE*}), spelled here because the shard package sits below
 * the registry and the cache is an executor-wide object made lazily where no parsed settings reach
 * it (as {@code ExecutorPools} reads {@code spark.spindle.threads}); ShardCacheSuite checks the two
 * agree. Set them when the session starts ({@code spark-defaults.conf}, {@code --conf}, the session
 * builder): executors see only those.
 *
 * @param enabled {@code spark.spindle.io.cache}
 * @param maxBytes {@code spark.spindle.io.cache.maxBytes}
 * @param dir {@code spark.spindle.io.cache.dir}, or {@code spindle-shard-cache} under the first of
 *     Spark's configured local directories
 */
record CacheSettings(boolean enabled, long maxBytes, Path dir) {
  static final String ENABLED_KEY = "spark.spindle.io.cache";
  static final String MAX_BYTES_KEY = "spark.spindle.io.cache.maxBytes";
  static final String DIR_KEY = "spark.spindle.io.cache.dir";
  static final long DEFAULT_MAX_BYTES = 20L << 30;
  static final String FOLDER = "spindle-shard-cache";

  static final CacheSettings OFF = new CacheSettings(false, 0, null);

  CacheSettings {
    if (enabled && maxBytes <= 0) {
      throw new IllegalArgumentException(
          "Invalid " + MAX_BYTES_KEY + ": " + maxBytes + " (must be > 0)");
    }
  }

  /** This JVM's settings: its SparkEnv's configuration; off where there is none. */
  static CacheSettings current() {
    try {
      SparkEnv env = SparkEnv.get();
      return env == null ? OFF : of(env.conf());
    } catch (NoClassDefFoundError noSpark) {
      return OFF;
    }
  }

  static CacheSettings of(SparkConf conf) {
    if (!conf.getBoolean(ENABLED_KEY, false)) {
      return OFF;
    }
    long max = conf.getLong(MAX_BYTES_KEY, DEFAULT_MAX_BYTES);
    String dir = conf.get(DIR_KEY, "");
    return new CacheSettings(
        true, max, dir.isBlank() ? defaultDir(conf, System::getenv) : Paths.get(dir));
  }

  /**
   * Under the first local directory as Spark resolves it ({@code SPARK_LOCAL_DIRS}, else {@code
   * spark.local.dir}, else {@code java.io.tmpdir}; on YARN the container's directories), not under
   * an application's own folder: a restarted executor, or a later job on the node, finds what an
   * earlier one fetched. A standalone worker hands its executors per-application folders ({@code
   * SPARK_EXECUTOR_DIRS}, which Spark would pick first) that it deletes when the application ends:
   * those are passed over for the roots they were made under.
   */
  static Path defaultDir(SparkConf conf, Function<String, String> env) {
    String[] dirs =
        env.apply("SPARK_EXECUTOR_DIRS") != null && env.apply("CONTAINER_ID") == null
            ? (env.apply("SPARK_LOCAL_DIRS") != null
                    ? env.apply("SPARK_LOCAL_DIRS")
                    : conf.get("spark.local.dir", System.getProperty("java.io.tmpdir")))
                .split(",")
            : Utils.getConfiguredLocalDirs(conf);
    String first = dirs.length == 0 ? System.getProperty("java.io.tmpdir") : dirs[0];
    return Paths.get(first.trim(), FOLDER);
  }
}
