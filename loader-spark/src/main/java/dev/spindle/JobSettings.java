package dev.spindle;

import dev.spindle.spark.config.ConfigKey;
import dev.spindle.spark.config.SpindleConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One job's own {@code spark.spindle.*} settings, applied on top of the session's: the builders'
 * typed setters and {@code set(key, value)} put them here, never into the session. Each value is
 * checked when it is set. One thread (the builder's).
 */
final class JobSettings {
  private final SparkSession spark;
  private final Map<String, String> local = new LinkedHashMap<>();

  /** Settings on top of {@code spark}'s configuration, which they never change. */
  JobSettings(SparkSession spark) {
    this.spark = spark;
  }

  /**
   * Sets {@code key} for this job. A known key's value is checked now; an unknown {@code
   * spark.spindle.*} key is refused, naming the closest known key, unless {@code
   * spark.spindle.allowUnknownKeys} is true here or in the session (then {@code run()} logs it).
   *
   * @throws IllegalArgumentException for a key outside {@code spark.spindle.*} (Spark's own
   *     settings belong to the session), an unknown key, or a value the key does not allow
   */
  void set(String key, String value) {
    if (key == null || !key.startsWith("spark.spindle.")) {
      throw new IllegalArgumentException(
          "Invalid job setting '"
              + key
              + "': a job takes"
              + " spark.spindle.* keys; Spark's own settings belong to the SparkSession");
    }
    if (value == null) {
      throw new IllegalArgumentException("Invalid value for " + key + ": null");
    }
    ConfigKey<?> known = SpindleConfig.key(key);
    if (known != null) {
      known.parse(value);
    } else if (!SpindleConfig.isKnown(key) && !allowsUnknownKeys()) {
      throw new IllegalArgumentException(
          SpindleConfig.unknownKeysMessage(SpindleConfig.unknownKeys(List.of(key))));
    }
    local.put(key, value.trim());
  }

  void set(ConfigKey<?> key, Object value) {
    set(key.key(), String.valueOf(value));
  }

  /** Whether this job's settings, else the session's, let unknown keys through. */
  private boolean allowsUnknownKeys() {
    String key = SpindleConfig.ALLOW_UNKNOWN_KEYS.key();
    String value = local.containsKey(key) ? local.get(key) : spark.conf().get(key, "false");
    return SpindleConfig.ALLOW_UNKNOWN_KEYS.parse(value);
  }

  boolean has(ConfigKey<?> key) {
    return local.containsKey(key.key());
  }

  /** This job's settings alone. */
  Map<String, String> local() {
    return Map.copyOf(local);
  }

  /**
   * What the job runs with: the session's configuration (its SparkConf, then its runtime settings),
   * then this job's settings. Reads the session, never changes it.
   */
  Map<String, String> merged() {
    Map<String, String> all = new LinkedHashMap<>();
    for (Tuple2<String, String> kv : spark.sparkContext().getConf().getAll()) {
      all.put(kv._1(), kv._2());
    }
    all.putAll(CollectionConverters.asJava(spark.conf().getAll()));
    all.putAll(local);
    return all;
  }
}
