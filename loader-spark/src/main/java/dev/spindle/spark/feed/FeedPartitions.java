package dev.spindle.spark.feed;

import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.serve.FeedSlice;
import java.util.ArrayList;
import java.util.List;

/**
 * Cuts the batches an epoch plan still delivers into Spark partitions. The units are (rank, batch)
 * pairs in rank-major order; partition {@code i} of {@code P} takes the contiguous run {@code
 * [i*U/P, (i+1)*U/P)} of the {@code U} units, as one slice per rank it touches. Which partition
 * produces a batch never changes the batch itself: that depends only on the plan.
 *
 * <p>The slice that ends a rank's share reports the digest of the whole share ({@link
 * FeedSlice#digestFrom()} is the share's first batch): when the share began in an earlier
 * partition, that task derives the planned batches before its own to hash them (at most one rank's
 * share per task, never read or decoded), so the driver gets each rank's digest from one task
 * instead of its indices from several.
 */
final class FeedPartitions {
  private FeedPartitions() {}

  /**
   * @param stopBatch every rank delivers its batches {@code [firstBatch, stopBatch)}
   * @param partitions the wanted number of partitions; fewer when there are fewer batches
   */
  static List<List<FeedSlice>> split(EpochPlan plan, int stopBatch, int partitions) {
    if (partitions < 1) {
      throw new IllegalArgumentException("Invalid partitions: " + partitions + " (must be >= 1)");
    }
    int first = plan.rank(0).firstBatch();
    long perRank = Math.max(0, stopBatch - first);
    long units = perRank * plan.worldSize();
    int parts = (int) Math.min(partitions, units);
    List<List<FeedSlice>> out = new ArrayList<>(parts);
    for (int p = 0; p < parts; p++) {
      long from = p * units / parts;
      long to = (p + 1) * units / parts;
      List<FeedSlice> slices = new ArrayList<>();
      for (long u = from; u < to; ) {
        int rank = (int) (u / perRank);
        long rankEnd = Math.min(to, (rank + 1) * perRank);
        int a = first + (int) (u - rank * perRank);
        int b = first + (int) (rankEnd - rank * perRank);
        slices.add(new FeedSlice(rank, a, b, b == stopBatch ? first : a));
        u = rankEnd;
      }
      out.add(slices);
    }
    return out;
  }
}
