package dev.spindle.spark.plan;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A weighted mixture as the plan uses it (package documentation, "Mixtures"): the sources' names,
 * their integer weights, which shards of the catalog each one holds (the sources' manifests laid
 * end to end), and the epoch's length in samples. The slot pattern (smooth weighted round-robin
 * over one period of {@code sum(weights)} slots) is derived on first use in each JVM.
 *
 * <p>Immutable and serializable; any thread.
 */
public final class Mixture implements Serializable {
  private static final long serialVersionUID = 1L;

  private final List<String> names;
  private final long[] weights;
  private final int[] shardEnds;
  private final long samples;
  private final long period;
  private transient volatile Pattern pattern;

  /**
   * The slots of one period: {@code source[o]} is the source of slot {@code o}, {@code rank[o]} how
   * many earlier slots of the period have the same source; {@code occurrences[base[s] + k]} is the
   * slot of source {@code s}'s k-th occurrence.
   */
  private record Pattern(int[] source, int[] rank, int[] occurrences, int[] base) {}

  /**
   * @param names the sources' names, in order
   * @param weights their integer weights ({@link MixSpec#weights()}), each {@code >= 1}
   * @param shardEnds {@code shardEnds[s]}: the catalog's shards of sources {@code 0..s} together
   * @param samples the epoch's length, {@code >= 1}
   */
  Mixture(List<String> names, long[] weights, int[] shardEnds, long samples) {
    this.names = List.copyOf(names);
    this.weights = weights.clone();
    this.shardEnds = shardEnds.clone();
    this.samples = samples;
    long p = 0;
    for (long w : weights) {
      p += w;
    }
    this.period = p;
    if (weights.length != names.size() || shardEnds.length != names.size()) {
      throw new IllegalArgumentException(
          "Invalid mixture: " + names.size() + " names, " + weights.length + " weights");
    }
    if (samples < 1) {
      throw new IllegalArgumentException(
          "Invalid mixture: an epoch of " + samples + " samples (must be >= 1)");
    }
  }

  /**
   * The mixture of {@code spec}'s sources over a catalog whose shard offsets are {@code offsets}
   * (the sources' manifests laid end to end, {@code shardsPerSource[s]} shards each), with the
   * epoch's length from {@code spec}'s rule. Refuses a source without samples, naming it.
   */
  public static Mixture of(MixSpec spec, long[] offsets, int[] shardsPerSource) {
    int n = spec.sources().size();
    if (shardsPerSource.length != n) {
      throw new IllegalArgumentException(
          "Invalid mixture: " + n + " sources but " + shardsPerSource.length + " shard counts");
    }
    int[] ends = new int[n];
    for (int s = 0, end = 0; s < n; s++) {
      end += shardsPerSource[s];
      ends[s] = end;
      long held = offsets[end] - offsets[end - shardsPerSource[s]];
      if (held == 0) {
        MixSpec.Source src = spec.sources().get(s);
        throw new IllegalArgumentException(
            "Refused mixture: source \"" + src.name() + "\" (" + src.uri() + ") has no samples");
      }
    }
    Mixture counting = new Mixture(spec.names(), spec.weights(), ends, 1);
    return new Mixture(spec.names(), spec.weights(), ends, counting.epochLength(spec, offsets));
  }

  public List<String> names() {
    return names;
  }

  /** The integer weights, a new array. */
  public long[] weights() {
    return weights.clone();
  }

  /** Samples in one epoch of the mixture. */
  public long samples() {
    return samples;
  }

  /** Sources in the mixture. */
  public int sources() {
    return names.size();
  }

  /** The catalog's first shard of source {@code s}. */
  public int firstShard(int s) {
    return s == 0 ? 0 : shardEnds[s - 1];
  }

  /** One past the catalog's last shard of source {@code s}. */
  public int endShard(int s) {
    return shardEnds[s];
  }

  /** The source of a dataset index of the catalog whose shard offsets are {@code offsets}. */
  public int sourceOf(long[] offsets, long index) {
    for (int s = 0; s < shardEnds.length; s++) {
      if (index < offsets[shardEnds[s]]) {
        return s;
      }
    }
    throw new IllegalArgumentException("Invalid sample index " + index + " for the mixture");
  }

  /** The source of mixture slot {@code p}. */
  int sourceAt(long p) {
    return pattern().source[(int) (p % period())];
  }

  /** How many earlier slots than {@code p} belong to the same source: its position there. */
  long positionInSource(long p) {
    Pattern pt = pattern();
    int o = (int) (p % period());
    return p / period() * weights[pt.source[o]] + pt.rank[o];
  }

  /** How many of the slots {@code [0, p)} belong to source {@code s}. */
  long countBefore(int s, long p) {
    Pattern pt = pattern();
    int o = (int) (p % period());
    int lo = pt.base[s];
    int hi = lo + (int) weights[s];
    int at = java.util.Arrays.binarySearch(pt.occurrences, lo, hi, o);
    return p / period() * weights[s] + ((at >= 0 ? at : -at - 1) - lo);
  }

  /** The slot of source {@code s}'s {@code k}-th sample. */
  long slotOf(int s, long k) {
    Pattern pt = pattern();
    return k / weights[s] * period() + pt.occurrences[pt.base[s] + (int) (k % weights[s])];
  }

  /** Slots per period of the pattern: the weights' sum. */
  long period() {
    return period;
  }

  /** The epoch's length by {@code spec}'s rule, with this mixture's pattern. */
  private long epochLength(MixSpec spec, long[] offsets) {
    String rule = spec.epoch().trim().toLowerCase(Locale.ROOT);
    if (rule.startsWith("samples:")) {
      return Long.parseLong(rule.substring("samples:".length()).trim());
    }
    long total = 0;
    long first = Long.MAX_VALUE;
    long all = 0;
    for (int s = 0; s < sources(); s++) {
      long n = offsets[endShard(s)] - offsets[firstShard(s)];
      total += n;
      first = Math.min(first, slotOf(s, n)); // the slot that would need a sample past its end
      all = Math.max(all, slotOf(s, n - 1) + 1); // the slot after its last sample
    }
    return switch (rule) {
      case "first-exhausted" -> first;
      case "all-exhausted" -> all;
      default -> total;
    };
  }

  private Pattern pattern() {
    Pattern p = pattern;
    if (p == null) {
      p = smoothRoundRobin(weights);
      pattern = p;
    }
    return p;
  }

  /**
   * Smooth weighted round-robin over one period: per slot, every source's credit grows by its
   * weight, the source with the most credit (the lowest index on a tie) takes the slot and loses
   * the period's length.
   */
  private static Pattern smoothRoundRobin(long[] weights) {
    int n = weights.length;
    long total = 0;
    for (long w : weights) {
      total += w;
    }
    int period = (int) total;
    int[] source = new int[period];
    int[] rank = new int[period];
    int[] base = new int[n];
    for (int s = 1; s < n; s++) {
      base[s] = base[s - 1] + (int) weights[s - 1];
    }
    int[] occurrences = new int[period];
    int[] taken = new int[n];
    long[] credit = new long[n];
    for (int o = 0; o < period; o++) {
      int best = 0;
      for (int s = 0; s < n; s++) {
        credit[s] += weights[s];
        if (credit[s] > credit[best]) {
          best = s;
        }
      }
      credit[best] -= total;
      source[o] = best;
      rank[o] = taken[best];
      occurrences[base[best] + taken[best]++] = o;
    }
    return new Pattern(source, rank, occurrences, base);
  }

  /** What the loader state records: names, weights, shards per source and the epoch's length. */
  public String describe() {
    StringBuilder b = new StringBuilder();
    for (int s = 0; s < sources(); s++) {
      b.append(s == 0 ? "" : ", ")
          .append(names.get(s))
          .append(" (weight ")
          .append(weights[s])
          .append(", ")
          .append(endShard(s) - firstShard(s))
          .append(" shards)");
    }
    return b.append("; ").append(samples).append(" samples per epoch").toString();
  }

  /** {@code shardEnds}, a new array (for the loader state). */
  int[] shardEnds() {
    return shardEnds.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Mixture m
        && m.names.equals(names)
        && Arrays.equals(m.weights, weights)
        && Arrays.equals(m.shardEnds, shardEnds)
        && m.samples == samples;
  }

  @Override
  public int hashCode() {
    return Objects.hash(names, Arrays.hashCode(weights), Arrays.hashCode(shardEnds), samples);
  }

  @Override
  public String toString() {
    return "Mixture[" + describe() + "]";
  }
}
