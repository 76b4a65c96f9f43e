package dev.spindle.spark.sql;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spindle.spark.batch.FieldSet;
import dev.spindle.spark.config.ConfigKey;
import dev.spindle.spark.config.OptionNames;
import dev.spindle.spark.config.Settings;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.manifest.PreprocessedInput;
import dev.spindle.spark.plan.MixSpec;
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
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code spindle} data source's options, resolved into {@link ScanSettings} on the driver: its
 * own options ({@code decode}, {@code quarantine}, {@code manifest}, the input path) and every
 * {@code spark.spindle.*} key under any of its {@link OptionNames}, falling back to the session's
 * configuration. An unknown option, or an unknown {@code spark.spindle.*} key of the session, fails
 * at once naming the closest valid name (with {@code spark.spindle.allowUnknownKeys=true}, as an
 * option or in the session, it is logged and ignored); an invalid value fails at once, naming
 * option, key and value. Stateless; any thread.
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
   * @param options the options as given (names in any case), or a catalog table's properties
   * @param session the session's configuration; its {@code spark.spindle.*} keys are defaults
   * @param hadoop to look at the input: a preprocess output's stored images set the scan's
   */
  static ScanSettings resolve(
      Map<String, String> options, Map<String, String> session, Configuration hadoop) {
    Map<String, String> given = given(options);
    Map<String, String> conf = settings(given, session, !catalogTable(options));
    Map<String, String> own = new HashMap<>();
    given.forEach((name, value) -> own.put(lower(name), value));
    String mix = mixture(given, conf) ? conf.get(SpindleConfig.MIX.key()).trim() : "";
    String input = mix.isEmpty() ? input(own) : mixInput(own, mix);
    StoredImages stored;
    try {
      // a mixture's sources must hold the same kind of samples (checked when it is planned)
      stored =
          PreprocessedInput.storedImages(
              hadoop, mix.isEmpty() ? input : MixSpec.parse(mix, "total").uris().get(0));
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
    return ScanSettings.of(
        input,
        decode(own.get(DECODE)),
        uri(own, QUARANTINE),
        uri(own, MANIFEST),
        Settings.read(conf),
        stored,
        !mix.isEmpty());
  }

  /**
   * Checks the options' names and their keys' values, and the session's {@code spark.spindle.*}
   * keys, as {@link #resolve} does: for the first call Spark makes, {@code inferSchema}.
   *
   * @throws IllegalArgumentException for an unknown option or key, or an invalid value
   */
  static void check(Map<String, String> options, Map<String, String> session) {
    settings(given(options), session, !catalogTable(options));
  }

  /**
   * The fields a scan with {@code options} declares (the option {@code fields}, else the session's
   * {@code spark.spindle.fields}).
   */
  static FieldSet fields(Map<String, String> options, Map<String, String> session) {
    Map<String, String> conf = settings(given(options), session, false);
    return Settings.read(conf).get(SpindleConfig.FIELDS);
  }

  /** Whether a scan with {@code options} reads a mixture ({@link #mixture}). */
  static boolean mixed(Map<String, String> options, Map<String, String> session) {
    Map<String, String> given = given(options);
    return mixture(given, settings(given, session, false));
  }

  /**
   * Whether a scan reads a mixture: the option {@code mix} is given, or the session's {@code
   * spark.spindle.mix} is set and no path is (a session's mixture, set for {@code feed}, does not
   * turn {@code load(uri)} into a mixture).
   */
  private static boolean mixture(Map<String, String> given, Map<String, String> conf) {
    if (conf.getOrDefault(SpindleConfig.MIX.key(), "").isBlank()) {
      return false;
    }
    boolean option = given.keySet().stream().anyMatch(n -> OptionNames.key(n) == SpindleConfig.MIX);
    boolean path =
        given.keySet().stream()
            .map(ScanOptions::lower)
            .anyMatch(n -> n.equals(PATH) || n.equals(PATHS));
    return option || !path;
  }

  /**
   * Whether {@code options} are the properties of a table of the session catalog ({@code CREATE
   * TABLE t USING spindle OPTIONS (...)}), which Spark passes whenever it loads the table, also to
   * describe or drop it: an unknown option of such a table is refused when a query reads it ({@link
   * #refusal}), so that the table can still be dropped.
   */
  static boolean catalogTable(Map<String, String> options) {
    String provider = options.get(TableCatalog.PROP_PROVIDER);
    return provider != null && provider.equalsIgnoreCase(SpindleDataSource.NAME);
  }

  /**
   * Why a scan with {@code options} is refused: its unknown options and the session's unknown
   * {@code spark.spindle.*} keys, each with the closest valid name; null when there are none or
   * {@code spark.spindle.allowUnknownKeys} lets them through (then they are logged).
   */
  static String refusal(Map<String, String> options, Map<String, String> session) {
    Map<String, String> given = given(options);
    Map<String, String> conf = settings(given, session, false);
    List<String> unknown = unknown(given);
    unknown.addAll(SpindleConfig.unknownKeys(conf.keySet()));
    if (unknown.isEmpty()) {
      return null;
    }
    if (SpindleConfig.get(conf, SpindleConfig.ALLOW_UNKNOWN_KEYS)) {
      unknown.forEach(
          u -> LOG.warn("{}; ignored ({}=true)", u, SpindleConfig.ALLOW_UNKNOWN_KEYS.key()));
      return null;
    }
    return SpindleConfig.unknownKeysMessage(unknown);
  }

  /**
   * The options as the user gave them. A table of the session catalog ({@code CREATE TABLE t USING
   * spindle OPTIONS (...)}) reaches the source with all its properties: the catalog's own ({@code
   * provider}, {@code location}, {@code owner}, ...), its {@code TBLPROPERTIES}, and its options,
   * also under the prefix {@code option.}; the prefixed ones are its options.
   */
  static Map<String, String> given(Map<String, String> options) {
    if (!catalogTable(options)) {
      return options;
    }
    Map<String, String> given = new HashMap<>();
    options.forEach(
        (name, value) -> {
          if (name.startsWith(TableCatalog.OPTION_PREFIX)) {
            given.put(name.substring(TableCatalog.OPTION_PREFIX.length()), value);
          } else if (name.equals(PATH)) {
            given.put(name, value); // the table's location
          }
        });
    return given;
  }

  /**
   * The {@code spark.spindle.*} settings of a scan: the session's, then the options'; every value
   * checked and, when {@code strict}, every option and key known.
   */
  private static Map<String, String> settings(
      Map<String, String> options, Map<String, String> session, boolean strict) {
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
          if (key == SpindleConfig.BATCH_TOKENS || key == SpindleConfig.BATCH_TOKENS_FIELD) {
            throw new IllegalArgumentException(
                "Option '"
                    + name
                    + "' ("
                    + key.key()
                    + ") is for feed and train: the spindle data source reads rows, which Spark"
                    + " batches itself; pack token batches in the trainer, or feed with"
                    + " --batch-tokens");
          }
          if (key != null) {
            check(name, key, value);
            conf.put(key.key(), value);
          }
        });
    if (strict) {
      String refused = refusal(options, session);
      if (refused != null) {
        throw new IllegalArgumentException(refused);
      }
    }
    return conf;
  }

  /** What is wrong with every option that names nothing, with the closest name. */
  static List<String> unknown(Map<String, String> options) {
    List<String> unknown = new ArrayList<>();
    for (String name : options.keySet()) {
      if (!OWN.contains(lower(name)) && OptionNames.key(name) == null) {
        String closest = OptionNames.closest(name, List.of(DECODE, QUARANTINE, MANIFEST));
        ConfigKey<?> key = OptionNames.key(closest);
        unknown.add(
            "Unknown option '"
                + name
                + "' of the spindle data source (did you mean '"
                + closest
                + "'"
                + (key == null ? "" : ", " + key.key())
                + "?)");
      }
    }
    return unknown;
  }

  private static void check(String option, ConfigKey<?> key, String value) {
    try {
      key.parser().apply(value.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(invalid(option, key.key(), value, e.getMessage()), e);
    }
  }

  /**
   * The input of a scan of the mixture {@code entries}: {@code mix:} and its entries, for names and
   * messages; a path given as well is refused, naming both.
   */
  private static String mixInput(Map<String, String> own, String entries) {
    if (own.containsKey(PATH) || own.containsKey(PATHS)) {
      throw new IllegalArgumentException(
          "The spindle data source reads either one input URI (load(uri)) or a mixture (option mix,"
              + " spark.spindle.mix), not both: got "
              + own.getOrDefault(PATH, own.get(PATHS))
              + " and mix '"
              + entries
              + "'; use load() without a path");
    }
    return "mix:" + entries;
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
