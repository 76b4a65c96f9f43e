package dev.spindle.spark.cli;

import dev.spindle.spark.config.ConfigKey;
import dev.spindle.spark.config.SpindleConfig;
import java.io.IOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * A command's settings, lowest precedence first: {@code --properties-file}, {@code --conf}, then
 * the flags that stand for keys. {@link #checked} parses every {@code spark.spindle.*} value by its
 * key's rules before Spark starts, naming the flag a value came from, or else its key.
 */
final class JobConf {
  private final Map<String, String> settings = new LinkedHashMap<>();
  private final Map<String, String> flagOfKey = new HashMap<>();

  /** The file's and {@code --conf}'s settings of {@code spark}. */
  static JobConf of(SparkOptions spark, CommandLine cl) throws IOException {
    JobConf conf = new JobConf();
    if (spark.propertiesFile != null) {
      try {
        conf.settings.putAll(PropertiesFile.read(spark.propertiesFile));
      } catch (IllegalArgumentException e) {
        throw new ParameterException(cl, e.getMessage());
      }
    }
    spark.conf.forEach((k, v) -> conf.settings.put(k.trim(), v.trim()));
    if (spark.noUi) {
      conf.settings.put("spark.ui.enabled", "false");
    }
    return conf;
  }

  /** {@code flag}'s value, when given, sets {@code key}. */
  JobConf flag(String flag, String value, String key) {
    if (value != null) {
      settings.put(key, value);
      flagOfKey.put(key, flag);
    }
    return this;
  }

  /**
   * The value {@code key} has so far (a flag, {@code --conf}, the properties file, else a {@code
   * spark.*} system property as spark-submit passes it), or null.
   */
  String value(String key) {
    return settings.getOrDefault(key, System.getProperty(key));
  }

  /**
   * Every setting, after checking each known {@code spark.spindle.*} value (also those spark-submit
   * passed as system properties) and the keys that only make sense together.
   *
   * @throws ParameterException naming the flag or key, the value and what is allowed
   */
  Map<String, String> checked(CommandLine cl) {
    Map<String, String> view = new LinkedHashMap<>();
    System.getProperties().stringPropertyNames().stream()
        .filter(k -> k.startsWith("spark."))
        .forEach(k -> view.put(k, System.getProperty(k)));
    view.putAll(settings);
    try {
      view.forEach(
          (k, v) -> {
            ConfigKey<?> key = SpindleConfig.key(k);
            if (key != null) {
              key.parse(v, flagOfKey.getOrDefault(k, k));
            }
          });
      SpindleConfig.validate(view);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, e.getMessage());
    }
    return Map.copyOf(settings);
  }
}
