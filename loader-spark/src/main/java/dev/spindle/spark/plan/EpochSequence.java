package dev.spindle.spark.plan;

import dev.spindle.spark.manifest.Manifest;
import java.io.Serializable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shuffled sequence of one epoch (package documentation, "One epoch", steps 1–3) described by
 * O(shards) numbers: the manifest's offsets, the seed, the epoch and the window. Any stretch of the
 * sequence is derived on demand by rebuilding and shuffling only the windows it overlaps, so no one
 * ever holds the whole epoch.
 *
 * <p>Immutable and serializable; only the shards' sample counts travel (packed, {@link
 * ShardCounts}), the shard order and each shard's start in the sequence are recomputed on first use
 * in each JVM. Any thread may call it.
 */
final class EpochSequence implements Serializable {
  private static final long serialVersionUID = 1L;

  private final long[] offsets;
  private final long seed;
  private final int epoch;
  private final int window;
  private final Mixture mixture;
  private transient volatile Layout layout;
  private transient volatile MixedSources mixed;
  private final transient AtomicLong windowsDerived = new AtomicLong();

  /** The shard order, and where each shard in it starts in the sequence (then the total). */
  private record Layout(int[] order, long[] starts) {}

  /**
   * @param offsets {@code Manifest.offsets()}: first dataset index of every shard, then the total;
   *     kept, not copied, and never modified
   */
  EpochSequence(long[] offsets, long seed, int epoch, int window) {
    this(offsets, seed, epoch, window, null);
  }

  /**
   * @param mixture null for one source (the whole catalog, steps 1–3); else the mixture's order
   *     over the catalog's sources (package documentation, "Mixtures")
   */
  EpochSequence(long[] offsets, long seed, int epoch, int window, Mixture mixture) {
    this.offsets = offsets;
    this.seed = seed;
    this.epoch = epoch;
    this.window = window;
    this.mixture = mixture;
  }

  /** The sequence of one epoch of {@code manifest}. */
  static EpochSequence of(Manifest manifest, long seed, int epoch, int window) {
    return new EpochSequence(manifest.offsets(), seed, epoch, window);
  }

  /** The sequence of one epoch of {@code manifest}, mixed by {@code mixture} unless it is null. */
  static EpochSequence of(Manifest manifest, long seed, int epoch, int window, Mixture mixture) {
    return new EpochSequence(manifest.offsets(), seed, epoch, window, mixture);
  }

  /** Samples in the epoch: the length of the sequence. */
  long total() {
    return mixture != null ? mixture.samples() : offsets[offsets.length - 1];
  }

  /** Windows derived by this instance in this JVM so far (to check what a slice touches). */
  long windowsDerived() {
    return windowsDerived.get();
  }

  /** Copies {@code sequence[from, to)} into {@code out[at, …)}, deriving each window once. */
  void copy(long from, long to, long[] out, int at) {
    new Cursor().copy(from, to, out, at);
  }

  /**
   * Copies stretches of the sequence, remembering the last window it derived so that adjacent
   * stretches in the same window cost one derivation. One per derivation; caller's thread.
   */
  final class Cursor {
    private long block = -1;
    private long[] contents;

    void copy(long from, long to, long[] out, int at) {
      if (from < 0 || to > total() || from > to) {
        throw new IndexOutOfBoundsException(
            "Invalid range [" + from + ", " + to + ") of an epoch of " + total() + " samples");
      }
      if (mixture != null) {
        mixed().copy(from, to, out, at);
        return;
      }
      for (long p = from; p < to; ) {
        long b = p / window;
        if (b != block) {
          contents = window(b);
          block = b;
        }
        int in = (int) (p - b * window);
        int n = (int) Math.min(to - p, contents.length - in);
        System.arraycopy(contents, in, out, at, n);
        at += n;
        p += n;
      }
    }
  }

  /** Window {@code b} after its shuffle: shard-order positions [bK, min(N, (b+1)K)). */
  long[] window(long b) {
    Layout l = layout();
    long from = b * window;
    long[] out = new long[(int) Math.min(window, total() - from)];
    int i = lastStartAtOrBefore(l.starts, from);
    long p = from;
    for (int at = 0; at < out.length; i++) {
      int shard = l.order[i];
      long first = offsets[shard] + (p - l.starts[i]);
      int n = (int) Math.min(l.starts[i + 1] - p, out.length - at);
      for (int k = 0; k < n; k++) {
        out[at++] = first + k;
      }
      p += n;
    }
    SplitMix64.stream(seed, epoch, SplitMix64.WINDOW, b).shuffle(out, 0, out.length);
    windowsDerived.incrementAndGet();
    return out;
  }

  /** The last shard-order position whose start is {@code <= p}: a non-empty shard holding p. */
  private static int lastStartAtOrBefore(long[] starts, long p) {
    int lo = 0;
    int hi = starts.length - 1;
    while (lo < hi) { // first position in [0, shards) whose start is > p, or shards
      int mid = (lo + hi) >>> 1;
      if (starts[mid] > p) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo - 1;
  }

  private Layout layout() {
    Layout l = layout;
    if (l == null) {
      int shards = offsets.length - 1;
      int[] order = EpochOrder.shardOrder(shards, seed, epoch);
      long[] starts = new long[shards + 1];
      for (int i = 0; i < shards; i++) {
        starts[i + 1] = starts[i] + offsets[order[i] + 1] - offsets[order[i]];
      }
      l = new Layout(order, starts);
      layout = l;
    }
    return l;
  }

  private MixedSources mixed() {
    MixedSources m = mixed;
    if (m == null) {
      m = new MixedSources(offsets, seed, epoch, window, mixture);
      mixed = m;
    }
    return m;
  }

  /** What travels: the shards' sample counts as variable-length integers (a few bytes each). */
  private Object writeReplace() {
    return new Shipped(ShardCounts.encode(offsets), seed, epoch, window, mixture);
  }

  /** The serialized form; a received copy derives its layout again and counts from zero. */
  private record Shipped(byte[] counts, long seed, int epoch, int window, Mixture mixture)
      implements Serializable {
    private Object readResolve() {
      return new EpochSequence(ShardCounts.decode(counts), seed, epoch, window, mixture);
    }
  }
}
