package dev.spindle.spark.plan;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A weighted mixture of data sets as the user wrote it: {@code NAME=PROPORTION:URI} entries (the
 * CLI's repeated {@code --mix}, or {@code spark.spindle.mix} with entries separated by {@code ;})
 * and the epoch rule ({@code spark.spindle.mix.epoch}). Parsing refuses, naming the entry, a
 * missing part, a name used twice, and a proportion that is not a positive decimal. Proportions are
 * relative weights: they are normalised by their sum, so {@code 0.7}/{@code 0.3} and {@code
 * 7}/{@code 3} are the same mixture. Immutable; any thread.
 *
 * @param sources the data sets, in the order given: a source's position is its stream id
 * @param epoch how many samples an epoch of the mixture has ({@link Mixture} says how each rule
 *     counts)
 */
public record MixSpec(List<Source> sources, String epoch) implements Serializable {

  /** The epoch rule when none is given: as many samples as the sources hold together. */
  public static final String DEFAULT_EPOCH = "total";

  /** Most slots in the mixture's period: the proportions' integer weights' sum. */
  static final long MAX_PERIOD = 1_000_000;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");

  /**
   * One data set of the mixture.
   *
   * @param name unique; letters, digits, {@code _ . -}
   * @param proportion its share before normalisation, {@code > 0}
   * @param uri what {@code --input} would name
   */
  public record Source(String name, BigDecimal proportion, String uri) implements Serializable {}

  public MixSpec {
    sources = List.copyOf(sources);
    if (sources.isEmpty()) {
      throw new IllegalArgumentException("Invalid mixture: no sources");
    }
    Set<String> names = new HashSet<>();
    for (Source s : sources) {
      if (!names.add(s.name())) {
        throw new IllegalArgumentException(
            "Invalid mixture: the name \"" + s.name() + "\" is used by more than one source");
      }
    }
    epochRule(epoch);
    weights(sources);
  }

  /** Parses {@code spark.spindle.mix}'s value: entries separated by {@code ;}. */
  public static MixSpec parse(String entries, String epoch) {
    List<String> list = new ArrayList<>();
    for (String e : entries.split(";")) {
      if (!e.isBlank()) {
        list.add(e.trim());
      }
    }
    return parse(list, epoch);
  }

  /** Parses {@code NAME=PROPORTION:URI} entries, in order. */
  public static MixSpec parse(List<String> entries, String epoch) {
    List<Source> sources = new ArrayList<>();
    for (String e : entries) {
      sources.add(entry(e));
    }
    return new MixSpec(sources, epoch == null || epoch.isBlank() ? DEFAULT_EPOCH : epoch.trim());
  }

  /** The value of {@code spark.spindle.mix} that parses back to these sources. */
  public String entries() {
    List<String> out = new ArrayList<>();
    for (Source s : sources) {
      out.add(s.name() + "=" + s.proportion().toPlainString() + ":" + s.uri());
    }
    return String.join(";", out);
  }

  /** The sources' names, in order. */
  public List<String> names() {
    return sources.stream().map(Source::name).toList();
  }

  /** The sources' URIs, in order. */
  public List<String> uris() {
    return sources.stream().map(Source::uri).toList();
  }

  /** The normalised proportions, in order: each proportion over their sum. */
  public double[] proportions() {
    long[] w = weights();
    long sum = 0;
    for (long x : w) {
      sum += x;
    }
    double[] p = new double[w.length];
    for (int i = 0; i < w.length; i++) {
      p[i] = (double) w[i] / sum;
    }
    return p;
  }

  /**
   * The proportions as the smallest integer weights in the same ratio (package documentation,
   * "Mixtures"): {@code 0.7, 0.3} gives {@code 7, 3}.
   */
  public long[] weights() {
    return weights(sources);
  }

  private static long[] weights(List<Source> sources) {
    int scale = 0;
    for (Source s : sources) {
      scale = Math.max(scale, Math.max(0, s.proportion().stripTrailingZeros().scale()));
    }
    BigInteger[] w = new BigInteger[sources.size()];
    BigInteger gcd = BigInteger.ZERO;
    BigInteger sum = BigInteger.ZERO;
    for (int i = 0; i < w.length; i++) {
      w[i] = sources.get(i).proportion().movePointRight(scale).toBigIntegerExact();
      gcd = gcd.gcd(w[i]);
    }
    long[] out = new long[w.length];
    for (int i = 0; i < w.length; i++) {
      w[i] = w[i].divide(gcd);
      sum = sum.add(w[i]);
    }
    if (sum.compareTo(BigInteger.valueOf(MAX_PERIOD)) > 0) {
      throw new IllegalArgumentException(
          "Invalid mixture: the proportions "
              + sources.stream().map(s -> s.proportion().toPlainString()).toList()
              + " reduce to integer weights summing to "
              + sum
              + " (at most "
              + MAX_PERIOD
              + "); give them with fewer digits");
    }
    for (int i = 0; i < w.length; i++) {
      out[i] = w[i].longValueExact();
    }
    return out;
  }

  private static Source entry(String entry) {
    String e = entry.trim();
    int eq = e.indexOf('=');
    int colon = eq < 0 ? -1 : e.indexOf(':', eq);
    if (eq <= 0 || colon < 0 || colon == e.length() - 1) {
      throw bad(entry, "must be NAME=PROPORTION:URI, e.g. web=0.7:/data/web");
    }
    String name = e.substring(0, eq).trim();
    if (!NAME.matcher(name).matches()) {
      throw bad(entry, "the name \"" + name + "\" must be letters, digits, '_', '.' or '-'");
    }
    String proportion = e.substring(eq + 1, colon).trim();
    BigDecimal p;
    try {
      p = new BigDecimal(proportion);
    } catch (NumberFormatException ex) {
      throw bad(entry, "the proportion \"" + proportion + "\" is not a number");
    }
    if (p.signum() <= 0) {
      throw bad(entry, "the proportion " + proportion + " must be > 0");
    }
    if (p.stripTrailingZeros().scale() > 6) {
      throw bad(entry, "the proportion " + proportion + " has more than 6 decimal places");
    }
    return new Source(name, p, e.substring(colon + 1).trim());
  }

  private static IllegalArgumentException bad(String entry, String why) {
    return new IllegalArgumentException("Invalid mixture entry \"" + entry + "\": " + why);
  }

  /**
   * Checks an epoch rule: {@code total}, {@code first-exhausted}, {@code all-exhausted} or {@code
   * samples:N}.
   */
  static void epochRule(String rule) {
    String r = rule == null ? "" : rule.trim().toLowerCase(Locale.ROOT);
    if (r.equals("total") || r.equals("first-exhausted") || r.equals("all-exhausted")) {
      return;
    }
    if (r.startsWith("samples:")) {
      try {
        if (Long.parseLong(r.substring("samples:".length()).trim()) >= 1) {
          return;
        }
      } catch (NumberFormatException e) {
        // refused below
      }
    }
    throw new IllegalArgumentException(
        "Invalid mixture epoch \""
            + rule
            + "\" (spark.spindle.mix.epoch: total, first-exhausted, all-exhausted or samples:N"
            + " with N >= 1)");
  }
}
