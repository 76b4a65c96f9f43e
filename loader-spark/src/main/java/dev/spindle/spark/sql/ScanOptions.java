package dev.spindle.spark.sql;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.config.ConfigKey;
import dev.spindle.spark.config.OptionNames;
import dev.spindle.spark.shard.PreprocessedInput;
import dev.spindle.spark.shard.StoredImages;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code spindle} data source's options, resolved into {@link ScanSettings} on the driver: its
 * own options ({@code decode}, {@code quarantine}, {@code manifest}, the input path) and every
 * {@code spark.spindle.*} key under any of its {@link OptionNames}, falling back to the session's
 * configuration. An unknown option is logged with the closest name and ignored; an invalid value
 * fails at once, naming option, key and value. Stateless; any thread.
 */
final class ScanOptions {
  static final String PATH = "path";
  static final String PATHS = "paths";
  static final String DECODE = "decode";
  static final String QUARANTINE = "quarantine";
  static final String MANIFEST = "manifest";
  private static final Set<String> OWN = Set.of(PATH, PATHS, DECODE, QUARANTINE, MANIFEST);
  private static final Logger LOG = LoggerFactory.getLogger(ScanOptions.class);

  private ScanOptions() {}

  /**
   * @param options the options as given (names in any case)
   * @param session the session's configuration; its {@code spark.spindle.*} keys are defaults
   * @param hadoop to look at the input: a preprocess output's stored images set the scan's
   */
  static ScanSettings resolve(
      Map<String, String> options, Map<String, String> session, Configuration hadoop) {
    unknown(options).forEach(LOG::warn);
    Map<String, String> conf = new HashMap<>();
    session.forEach(
        (k, v) -> {
          if (k.startsWith("spark.spindle.")) {
            conf.put(k, v);
          }
        });
    options.forEach(
        (name, value) -> {
          ConfigKey<?> key = OWN.contains(lower(name)) ? null : OptionNames.key(name);
          if (key != null) {
            check(name, key, value);
            conf.put(key.key(), value);
          }
        });
    Map<String, String> own = new HashMap<>();
    options.forEach((name, value) -> own.put(lower(name), value));
    String input = input(own);
    StoredImages stored;
    try {
      stored = PreprocessedInput.storedImages(hadoop, input);
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
    return ScanSettings.of(
        input, decode(own.get(DECODE)), uri(own, QUARANTINE), uri(own, MANIFEST), conf, stored);
  }

  /** A warning for every option that names nothing, with the closest name. */
  static List<String> unknown(Map<String, String> options) {
    List<String> warnings = new ArrayList<>();
    for (String name : options.keySet()) {
      if (!OWN.contains(lower(name)) && OptionNames.key(name) == null) {
        String closest = OptionNames.closest(name, List.of(DECODE, QUARANTINE, MANIFEST));
        ConfigKey<?> key = OptionNames.key(closest);
        warnings.add(
            "Unknown option '"
                + name
                + "' of the spindle data source (ignored); did"
                + " you mean '"
                + closest
                + "'"
                + (key == null ? "" : " (" + key.key() + ")")
                + "?");
      }
    }
    return warnings;
  }

  private static void check(String option, ConfigKey<?> key, String value) {
    try {
      key.parser().apply(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(invalid(option, key.key(), value, e.getMessage()), e);
    }
  }

  private static String input(Map<String, String> own) {
    String path = own.get(PATH);
    if (path != null) {
      return path;
    }
    String paths = own.get(PATHS);
    if (paths != null) {
      try {
        String[] all = new ObjectMapper().readValue(paths, String[].class);
        if (all.length == 1) {
          return all[0];
        }
        throw new IllegalArgumentException(
            "The spindle data source reads one input URI, got " + all.length + ": " + paths);
      } catch (IOException e) {
        throw new IllegalArgumentException(invalid(PATHS, null, paths, e.getMessage()), e);
      }
    }
    throw new IllegalArgumentException(
        "The spindle data source needs an input URI:"
            + " spark.read.format(\"spindle\").load(uri), or SELECT ... FROM spindle.`uri`");
  }

  static boolean decode(String value) {
    if (value == null) {
      return true;
    }
    String v = value.trim().toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException(invalid(DECODE, null, value, "must be true or false"));
    }
    return v.equals("true");
  }

  /** The option's value as a URI, or null when not given. */
  private static String uri(Map<String, String> own, String option) {
    String value = own.get(option);
    if (value == null) {
      return null;
    }
    try {
      new Path(value);
      return value;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(invalid(option, null, value, e.getMessage()), e);
    }
  }

  /** The message for a bad value of {@code option} (as given), naming its key when it has one. */
  private static String invalid(String option, String key, String value, String why) {
    return "Invalid value for option '"
        + option
        + "'"
        + (key == null ? "" : " (" + key + ")")
        + " of the spindle data source: '"
        + value
        + "' ("
        + why
        + ")";
  }

  private static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
