package dev.spindle.spark.feed;

import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.plan.BatchKey;
import dev.spindle.spark.plan.Digest;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.RankPlan;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The driver's account of one epoch: takes every batch once by its {@link BatchKey} (a second
 * record of a key must have the same indices, and is not counted again), then checks that every
 * rank got each of its planned batches exactly once and computes the per-rank digest of what was
 * delivered, in plan order. Quarantined samples are kept once per planned index. Driver thread.
 */
final class FeedLedger {
  /**
   * One rank's result for the report.
   *
   * @param rank the rank
   * @param epoch the epoch
   * @param leg the plan leg (0 unless a resume re-split the epoch)
   * @param firstBatch the first batch delivered in this run
   * @param batches batches delivered in this run
   * @param samples rows that carry a real sample (not padding)
   * @param padded padded rows
   * @param substituted rows standing in for quarantined samples
   * @param digest SHA-256 of the delivered indices in plan order
   */
  record RankResult(int rank, int epoch, int leg, int firstBatch, int batches, long samples,
      long padded, long substituted, String digest) {
    Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("rank", rank);
      m.put("epoch", epoch);
      m.put("leg", leg);
      m.put("first_batch", firstBatch);
      m.put("batches", batches);
      m.put("samples", samples);
      m.put("padded", padded);
      m.put("substituted", substituted);
      m.put("digest", digest);
      return m;
    }
  }

  private final EpochPlan plan;
  private final int[] fromBatch;
  private final int stopBatch;
  private final Map<BatchKey, BatchRecord> batches = new HashMap<>();
  private final Map<Long, QuarantineRecord> quarantined = new TreeMap<>();
  private long duplicates;
  private long refused;

  /**
   * @param fromBatch per rank, the first batch it delivers (a served rank may start at its
   *     trainer's resume point instead of the plan's first batch)
   */
  FeedLedger(EpochPlan plan, int[] fromBatch, int stopBatch) {
    this.plan = plan;
    this.fromBatch = fromBatch.clone();
    this.stopBatch = stopBatch;
  }

  void add(TaskOutcome outcome) {
    for (BatchRecord r : outcome.batches()) {
      BatchRecord earlier = batches.putIfAbsent(r.key(), r);
      if (earlier != null) {
        if (!Arrays.equals(earlier.indices(), r.indices())) {
          throw new IllegalStateException("Batch " + r.key() + " was produced twice with"
              + " different contents; the plan is not deterministic");
        }
        duplicates++;
      }
      refused += r.delivered() ? 0 : 1;
    }
    for (QuarantineRecord q : outcome.quarantined()) {
      quarantined.putIfAbsent(q.index(), q);
    }
  }

  /** Per rank, checked against the plan; fails naming the first missing or wrong batch. */
  List<RankResult> results() {
    List<RankResult> out = new ArrayList<>(plan.worldSize());
    for (RankPlan rank : plan.ranks()) {
      out.add(result(rank));
    }
    return out;
  }

  private RankResult result(RankPlan rank) {
    Digest digest = new Digest();
    long padded = 0;
    long substituted = 0;
    int from = fromBatch[rank.rank()];
    int stop = Math.max(from, stopBatch);
    for (int k = from; k < stop; k++) {
      BatchRecord r = batches.get(rank.batchKey(k));
      if (r == null) {
        throw new IllegalStateException("Batch " + rank.batchKey(k) + " was never delivered");
      }
      digest.update(r.indices(), 0, r.indices().length);
      padded += r.padded();
      substituted += r.substituted();
    }
    int count = stop - from;
    String hex = digest.hex();
    String planned = Digest.of(rank.indices(from, stop));
    if (!hex.equals(planned)) {
      throw new IllegalStateException("Rank " + rank.rank() + " of epoch " + rank.epoch()
          + " received " + hex + ", the plan says " + planned);
    }
    long rows = (long) count * rank.batchSize();
    return new RankResult(rank.rank(), rank.epoch(), rank.leg(), from, count,
        rows - padded, padded, substituted, hex);
  }

  /** Quarantined samples, one per planned index, in index order. */
  List<QuarantineRecord> quarantined() {
    return new ArrayList<>(quarantined.values());
  }

  /** Records of a batch beyond its first (a task's batches reported twice); 0 normally. */
  long duplicates() {
    return duplicates;
  }

  /** Batches a retried attempt produced but did not hand over again (same JVM). */
  long refused() {
    return refused;
  }
}
