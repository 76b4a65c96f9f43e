package dev.spindle.spark.plan;

/**
 * Step 1 of a plan: the epoch's shard order (package documentation, "One epoch", step 1). Pure;
 * runs on the calling thread.
 */
final class EpochOrder {
  private EpochOrder() {}

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
