package dev.spindle.spark.config;

import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * The names under which a {@code spark.spindle.*} key may be given as a data source option: the key
 * itself ({@code spark.spindle.image.size}), the key without {@code spark.spindle.} ({@code
 * image.size}), and for {@code spark.spindle.image.*} keys also the last part alone ({@code size}),
 * unless that is another key's name ({@code seed} is {@code spark.spindle.seed}; the image seed is
 * {@code image.seed}). Case-insensitive, since Spark lowercases option names. Stateless; any
 * thread.
 */
public final class OptionNames {
  private static final String PREFIX = "spark.spindle.";
  private static final String IMAGE = PREFIX + "image.";

  private OptionNames() {}

  /** The key {@code option} names, or null when it names none. */
  public static ConfigKey<?> key(String option) {
    String o = option.toLowerCase(Locale.ROOT);
    ConfigKey<?> shortMatch = null;
    for (ConfigKey<?> k : SpindleConfig.keys()) {
      String key = k.key().toLowerCase(Locale.ROOT);
      if (o.equals(key) || o.equals(key.substring(PREFIX.length()))) {
        return k;
      }
      if (key.startsWith(IMAGE) && o.equals(key.substring(IMAGE.length()))) {
        shortMatch = k;
      }
    }
    return shortMatch;
  }

  /** The shortest name of {@code key} as an option ({@code size} for the image size). */
  public static String shortest(ConfigKey<?> key) {
    String name = key.key();
    if (name.startsWith(IMAGE) && key(name.substring(IMAGE.length())) == key) {
      return name.substring(IMAGE.length());
    }
    return name.substring(PREFIX.length());
  }

  /**
   * The option name closest to {@code option} by edit distance, among every key's names and {@code
   * others} (a data source's own options), e.g. {@code size} for {@code sise}: for "did you mean"
   * warnings. A key is suggested by its {@link #shortest} name.
   */
  public static String closest(String option, Collection<String> others) {
    String o = option.toLowerCase(Locale.ROOT);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (ConfigKey<?> k : SpindleConfig.keys()) {
      for (String name : List.of(k.key(), k.key().substring(PREFIX.length()), shortest(k))) {
        int d = Nearest.distance(o, name);
        if (d < bestDistance) {
          best = shortest(k);
          bestDistance = d;
        }
      }
    }
    for (String name : others) {
      int d = Nearest.distance(o, name);
      if (d < bestDistance) {
        best = name;
        bestDistance = d;
      }
    }
    return best;
  }
}
