package dev.spindle.spark.iobench;

import dev.spindle.spark.config.SpindleConfig;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One way {@code bench io} feeds the data set: a name, where the shards are read from, the Spark
 * settings it adds to the bench's own, and the epochs fed (unmeasured) before the measured one.
 * {@code {scratch}} in a value is the run's own scratch folder (fresh for each round).
 *
 * @param name the variant's name in the report and in {@code --variants}
 * @param source plain local disk, or the counted store with or without {@code --latency-ms}
 * @param conf Spark settings ({@code spark.spindle.*} or any other) on top of the bench's
 * @param warmEpochs epochs fed first, on the same session, before the measured epoch
 */
record IoVariant(String name, Source source, Map<String, String> conf, int warmEpochs) {
  /** Where a variant reads the shards from. */
  enum Source {
    /** {@code file://}: the reference. */
    LOCAL,
    /** {@code counted://} with no latency. */
    STORE,
    /** {@code counted://} with {@code --latency-ms} per request. */
    STORE_LATENCY
  }

  private static final Map<String, String> INDEX = Map.of("spark.spindle.io.index", "true");
  private static final Map<String, String> NO_INDEX = Map.of("spark.spindle.io.index", "false");
  private static final Map<String, String> INDEX_1MIB =
      Map.of("spark.spindle.io.index", "true", "spark.spindle.io.coalesceBytes", "1048576");
  private static final Map<String, String> CACHE =
      Map.of(
          "spark.spindle.io.index", "true",
          "spark.spindle.io.cache", "true",
          "spark.spindle.io.cache.dir", "{scratch}/shard-cache");

  /**
   * Every variant, in the order a round runs them (odd rounds in reverse). Adding one is one line.
   * A variant that names a {@code spark.spindle.*} key this build does not have is skipped, and the
   * report says which key (the member index and the shard cache are built on other branches).
   */
  static final List<IoVariant> ALL =
      List.of(
          new IoVariant("local", Source.LOCAL, Map.of(), 0),
          new IoVariant("store", Source.STORE, NO_INDEX, 0),
          new IoVariant("store-latency", Source.STORE_LATENCY, NO_INDEX, 0),
          new IoVariant("indexed", Source.STORE, INDEX, 0),
          new IoVariant("indexed-latency", Source.STORE_LATENCY, INDEX, 0),
          new IoVariant("indexed-1mib-latency", Source.STORE_LATENCY, INDEX_1MIB, 0),
          new IoVariant("cache-cold", Source.STORE_LATENCY, CACHE, 0),
          new IoVariant("cache-warm", Source.STORE_LATENCY, CACHE, 1));

  /** The variant named {@code name}, or null. */
  static IoVariant named(String name) {
    return ALL.stream().filter(v -> v.name.equals(name)).findFirst().orElse(null);
  }

  /** The first {@code spark.spindle.*} key of {@link #conf} this build does not know, or null. */
  String unknownKey() {
    return conf.keySet().stream()
        .filter(k -> k.startsWith("spark.spindle.") && SpindleConfig.key(k) == null)
        .sorted()
        .findFirst()
        .orElse(null);
  }

  /** {@link #conf} with {@code {scratch}} replaced by {@code scratch}. */
  Map<String, String> conf(Path scratch) {
    Map<String, String> out = new LinkedHashMap<>();
    conf.forEach((k, v) -> out.put(k, v.replace("{scratch}", scratch.toString())));
    return out;
  }
}
