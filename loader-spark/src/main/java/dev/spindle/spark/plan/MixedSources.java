package dev.spindle.spark.plan;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Derives stretches of a mixture's epoch sequence (package documentation, "Mixtures"): slot {@code
 * p} takes the next sample of the pattern's source, from that source's own order, which is the
 * single-source sequence (steps 1–3) of the source's shards under a seed of its own per pass.
 * Within a stretch each source's samples are a contiguous run of its order, so a stretch costs what
 * single-source stretches of the same total length cost.
 *
 * <p>Per JVM and epoch sequence; any thread (the passes' sequences are kept in a concurrent map).
 */
final class MixedSources {
  /** The most source passes kept at once (each holds O(shards) numbers once used). */
  private static final int KEPT_PASSES = 64;

  private final long[] offsets;
  private final long seed;
  private final int epoch;
  private final int window;
  private final Mixture mixture;
  private final Map<Long, EpochSequence> passes = new ConcurrentHashMap<>();

  MixedSources(long[] offsets, long seed, int epoch, int window, Mixture mixture) {
    this.offsets = offsets;
    this.seed = seed;
    this.epoch = epoch;
    this.window = window;
    this.mixture = mixture;
  }

  /**
   * The seed of source {@code s}'s pass {@code j} in an epoch: the first output of {@code
   * stream(seed, epoch, 4, s·2^32 + j)}.
   */
  static long sourceSeed(long seed, int epoch, int source, long pass) {
    return SplitMix64.stream(seed, epoch, SplitMix64.MIX_SOURCE, (long) source << 32 | pass).next();
  }

  /** Copies {@code mixed[from, to)} into {@code out[at, …)}. */
  void copy(long from, long to, long[] out, int at) {
    int n = (int) (to - from);
    int sources = mixture.sources();
    int[] source = new int[n];
    long[] first = new long[sources];
    int[] count = new int[sources];
    for (int i = 0; i < n; i++) {
      long p = from + i;
      int s = mixture.sourceAt(p);
      source[i] = s;
      if (count[s]++ == 0) {
        first[s] = mixture.positionInSource(p);
      }
    }
    long[][] runs = new long[sources][];
    for (int s = 0; s < sources; s++) {
      runs[s] = count[s] == 0 ? null : run(s, first[s], count[s]);
    }
    int[] next = new int[sources];
    for (int i = 0; i < n; i++) {
      out[at + i] = runs[source[i]][next[source[i]]++];
    }
  }

  /** Source {@code s}'s samples {@code [k, k + count)} of its passes laid end to end. */
  private long[] run(int s, long k, int count) {
    int firstShard = mixture.firstShard(s);
    long base = offsets[firstShard];
    long size = offsets[mixture.endShard(s)] - base;
    long[] out = new long[count];
    for (int at = 0; at < count; ) {
      long pass = k / size;
      long within = k % size;
      int m = (int) Math.min(count - at, size - within);
      pass(s, pass).copy(within, within + m, out, at);
      at += m;
      k += m;
    }
    for (int i = 0; i < count; i++) {
      out[i] += base;
    }
    return out;
  }

  private EpochSequence pass(int s, long pass) {
    long key = (long) s << 40 | pass;
    EpochSequence e = passes.get(key);
    if (e == null) {
      if (passes.size() >= KEPT_PASSES) {
        passes.clear();
      }
      int from = mixture.firstShard(s);
      long[] local = Arrays.copyOfRange(offsets, from, mixture.endShard(s) + 1);
      long base = local[0];
      for (int i = 0; i < local.length; i++) {
        local[i] -= base;
      }
      e = new EpochSequence(local, sourceSeed(seed, epoch, s, pass), epoch, window);
      passes.put(key, e);
    }
    return e;
  }
}
