package dev.spindle.spark.plan;

/**
 * The only source of randomness of epoch plans and of random image operations: Steele, Lea and
 * Flood's SplitMix64, seeded per purpose from (seed, epoch, stream, block) so that every
 * permutation, and every sample's random crops and flips, can be recomputed on its own. Its output
 * is fixed by the constants below forever; {@code java.util.Random}, {@code SplittableRandom} and
 * {@code Collections.shuffle} are never used for them because their sequences are not part of any
 * contract we control. The algorithm is normative (package documentation, "Random streams"; the
 * image stream in {@code dev.spindle.spark.image}'s).
 *
 * <p>Not thread-safe: one instance per permutation or sample, owned by the thread that uses it.
 */
public final class SplitMix64 {
  static final long GAMMA = 0x9E3779B97F4A7C15L;

  /** Stream id of the shard-order permutation. */
  static final long SHARD_ORDER = 1;

  /** Stream id of the within-window permutations. */
  static final long WINDOW = 2;

  /** Stream id of one sample's random image operations (block: the sample's index). */
  public static final long IMAGE_OPS = 3;

  /** Stream id of the seeds of a mixture's sources (block: source·2^32 + pass). */
  static final long MIX_SOURCE = 4;

  private long state;

  private SplitMix64(long state) {
    this.state = state;
  }

  /** The generator for one purpose: see the package documentation, "Random streams". */
  public static SplitMix64 stream(long seed, long epoch, long stream, long block) {
    return new SplitMix64(mix(mix(mix(mix(seed) ^ epoch) ^ stream) ^ block));
  }

  /** Plain SplitMix64 from a raw state, as in the reference implementation's test vectors. */
  static SplitMix64 fromState(long state) {
    return new SplitMix64(state);
  }

  /** SplitMix64's finaliser (David Stafford's "Mix13"); a bijection on 64-bit values. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** The next 64 random bits. */
  public long next() {
    state += GAMMA;
    return mix(state);
  }

  /**
   * {@code floor(next() * bound / 2^64)}, reading {@code next()} as unsigned; {@code bound >= 1}.
   */
  public int nextBelow(int bound) {
    long x = next();
    return (int) (Math.multiplyHigh(x, bound) + ((x >> 63) & bound));
  }

  /** {@code (next() >>> 11) * 2^-53}: a multiple of {@code 2^-53} in {@code [0, 1)}. */
  public double nextDouble() {
    return (next() >>> 11) * 0x1.0p-53;
  }

  /**
   * Durstenfeld's Fisher–Yates over {@code a[from, to)}: i from the top down, j = nextBelow(i+1).
   */
  void shuffle(long[] a, int from, int to) {
    for (int i = to - from - 1; i > 0; i--) {
      int j = nextBelow(i + 1);
      long t = a[from + i];
      a[from + i] = a[from + j];
      a[from + j] = t;
    }
  }

  /** The same permutation as {@link #shuffle(long[], int, int)}, on an int array. */
  public void shuffle(int[] a) {
    for (int i = a.length - 1; i > 0; i--) {
      int j = nextBelow(i + 1);
      int t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  }
}
