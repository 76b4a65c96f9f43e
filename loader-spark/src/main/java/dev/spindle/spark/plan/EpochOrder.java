package dev.spindle.spark.plan;

/**
 * Step 1 of a plan: the whole epoch as one shuffled sequence of dataset indices (shard order
 * permuted, then samples permuted inside fixed windows). Pure; runs on the calling thread.
 */
final class EpochOrder {
  /** The largest epoch a plan holds: Java's array limit, with headroom. */
  static final long MAX_SAMPLES = Integer.MAX_VALUE - 8;

  private EpochOrder() {}

  /**
   * The shuffled epoch.
   *
   * @param offsets {@code Manifest.offsets()}: first dataset index of every shard, then the total
   */
  static long[] of(long[] offsets, long seed, int epoch, int window) {
    int shards = offsets.length - 1;
    long total = offsets[shards];
    if (total > MAX_SAMPLES) {
      throw new IllegalArgumentException(
          "Refused plan: " + total + " samples (at most " + MAX_SAMPLES + " per epoch)");
    }
    long[] sequence = new long[(int) total];
    int at = 0;
    for (int shard : shardOrder(shards, seed, epoch)) {
      for (long i = offsets[shard]; i < offsets[shard + 1]; i++) {
        sequence[at++] = i;
      }
    }
    for (long block = 0; block * window < total; block++) {
      int from = (int) (block * window);
      int to = (int) Math.min(total, from + (long) window);
      SplitMix64.stream(seed, epoch, SplitMix64.WINDOW, block).shuffle(sequence, from, to);
    }
    return sequence;
  }

  /** The epoch's shard order: a permutation of {@code [0, shards)}. */
  static int[] shardOrder(int shards, long seed, int epoch) {
    int[] order = new int[shards];
    for (int i = 0; i < shards; i++) {
      order[i] = i;
    }
    SplitMix64.stream(seed, epoch, SplitMix64.SHARD_ORDER, 0).shuffle(order);
    return order;
  }
}
