package dev.spindle.spark.feed;

import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.plan.BatchKey;
import dev.spindle.spark.plan.Digest;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.serve.BatchRun;
import dev.spindle.spark.serve.SliceAccount;
import dev.spindle.spark.serve.TaskOutcome;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The driver's account of one epoch, from the tasks' {@link BatchRun}s: takes every batch once by
 * its {@link BatchKey} (a second report of the same run must have the same digest, and is not
 * counted again; runs that share only some batches are refused), then checks that every rank got
 * each of its planned batches exactly once and takes the rank's digest from the task that produced
 * its last batch. Quarantined samples are kept once per planned index. Driver thread.
 *
 * <p>Its work and memory are O(ranks + runs): it never sees a sample index. Whether a batch holds
 * the planned indices is checked where they are, by the task that produced it, before anyone had it
 * ({@link SliceAccount}); the digest is that task's hash of the rank's indices (for a rank whose
 * first batches another task produced, of the planned ones, which those batches were checked
 * against), so it is the SHA-256 of the delivered indices in plan order, as before.
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
  record RankResult(
      int rank,
      int epoch,
      int leg,
      int firstBatch,
      int batches,
      long samples,
      long padded,
      long substituted,
      String digest) {
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

  /** The digest of no index: a rank that delivers no batch in this run. */
  private static final String EMPTY = Digest.of(new long[0]);

  private final EpochPlan plan;
  private final int[] fromBatch;
  private final int stopBatch;

  /** Per rank with runs, its runs by first batch: disjoint, within the rank's share. */
  private final Map<Integer, NavigableMap<Integer, BatchRun>> runs = new HashMap<>();

  /** Per rank, the digest of its whole share, from the run that ends it. */
  private final Map<Integer, String> digests = new HashMap<>();

  private final Map<Long, QuarantineRecord> quarantined = new TreeMap<>();
  private long duplicates;
  private long refused;

  /**
   * @param fromBatch per rank, the first batch it delivers (a served rank may start at its
   *     trainer's resume point instead of the plan's first batch)
   * @param stopBatch every rank delivers its batches up to this one
   */
  FeedLedger(EpochPlan plan, int[] fromBatch, int stopBatch) {
    this.plan = plan;
    this.fromBatch = fromBatch.clone();
    this.stopBatch = stopBatch;
  }

  void add(TaskOutcome outcome) {
    for (BatchRun r : outcome.runs()) {
      add(r);
    }
    for (QuarantineRecord q : outcome.quarantined()) {
      quarantined.putIfAbsent(q.index(), q);
    }
  }

  private void add(BatchRun run) {
    refused += run.notRedelivered();
    int rank = checkPlanned(run);
    NavigableMap<Integer, BatchRun> taken = runs.computeIfAbsent(rank, r -> new TreeMap<>());
    BatchRun same = taken.get(run.fromBatch());
    if (same != null && same.toBatch() == run.toBatch()) {
      if (same.digestFrom() == run.digestFrom() && !same.digest().equals(run.digest())) {
        throw new IllegalStateException(
            "Batches "
                + run.describe()
                + " were produced twice with"
                + " different contents; the plan is not deterministic");
      }
      duplicates += run.batches();
    } else {
      checkDisjoint(taken, run);
      taken.put(run.fromBatch(), run);
    }
    if (run.toBatch() == stop(rank) && run.digestFrom() == fromBatch[rank]) {
      String earlier = digests.putIfAbsent(rank, run.digest());
      if (earlier != null && !earlier.equals(run.digest())) {
        throw new IllegalStateException(
            "Rank "
                + rank
                + " of epoch "
                + plan.epoch()
                + " was"
                + " reported twice with different digests, "
                + earlier
                + " and "
                + run.digest()
                + " (batches "
                + run.describe()
                + "); the plan is not deterministic");
      }
    }
  }

  /** The run's rank, once its batches are known to be planned for this run of the epoch. */
  private int checkPlanned(BatchRun run) {
    int rank = run.rank();
    boolean ours =
        run.first().epoch() == plan.epoch()
            && run.first().leg() == plan.leg()
            && rank >= 0
            && rank < plan.worldSize();
    if (!ours || run.fromBatch() < fromBatch[rank] || run.toBatch() > stop(rank)) {
      throw new IllegalStateException(
          "Batches "
              + run.describe()
              + " were delivered, but "
              + (ours
                  ? "rank "
                      + rank
                      + " delivers batches "
                      + fromBatch[rank]
                      + ".."
                      + (stop(rank) - 1)
                      + " only"
                  : "the plan is of epoch "
                      + plan.epoch()
                      + ", leg "
                      + plan.leg()
                      + ", ranks 0.."
                      + (plan.worldSize() - 1)));
    }
    return rank;
  }

  /** Refuses a run that shares some, but not all, of its batches with one taken already. */
  private static void checkDisjoint(NavigableMap<Integer, BatchRun> taken, BatchRun run) {
    Map.Entry<Integer, BatchRun> before = taken.floorEntry(run.fromBatch());
    Map.Entry<Integer, BatchRun> after = taken.ceilingEntry(run.fromBatch());
    BatchRun other =
        before != null && before.getValue().toBatch() > run.fromBatch()
            ? before.getValue()
            : after != null && after.getKey() < run.toBatch() ? after.getValue() : null;
    if (other != null) {
      int shared = Math.max(other.fromBatch(), run.fromBatch());
      throw new IllegalStateException(
          "Batch "
              + run.key(shared)
              + " was reported by two task"
              + " attempts in different runs, "
              + other.describe()
              + " and "
              + run.describe());
    }
  }

  private int stop(int rank) {
    return Math.max(fromBatch[rank], stopBatch);
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
    int from = fromBatch[rank.rank()];
    int stop = stop(rank.rank());
    int next = from;
    long padded = 0;
    long substituted = 0;
    for (BatchRun r : runs.getOrDefault(rank.rank(), Collections.emptyNavigableMap()).values()) {
      if (r.fromBatch() != next) {
        break;
      }
      next = r.toBatch();
      padded += r.padded();
      substituted += r.substituted();
    }
    if (next < stop) {
      throw new IllegalStateException("Batch " + rank.batchKey(next) + " was never delivered");
    }
    String digest = from == stop ? EMPTY : digests.get(rank.rank());
    if (digest == null) {
      throw new IllegalStateException(
          "Rank "
              + rank.rank()
              + " of epoch "
              + rank.epoch()
              + " got every batch, but no task reported the digest of batches "
              + from
              + ".."
              + (stop - 1));
    }
    long rows = rank.rows(from, stop); // a token budget's batches vary in rows
    long planned = rows - rank.realRows(from, stop);
    if (padded != planned) {
      throw new IllegalStateException(
          "Rank "
              + rank.rank()
              + " of epoch "
              + rank.epoch()
              + " received "
              + padded
              + " padded rows in batches "
              + from
              + ".."
              + (stop - 1)
              + ", the plan has "
              + planned);
    }
    return new RankResult(
        rank.rank(),
        rank.epoch(),
        rank.leg(),
        from,
        stop - from,
        rows - padded,
        padded,
        substituted,
        digest);
  }

  /** Quarantined samples, one per planned index, in index order. */
  List<QuarantineRecord> quarantined() {
    return new ArrayList<>(quarantined.values());
  }

  /**
   * Batches reported again in a run reported before (a task's batches reported twice); 0 normally.
   */
  long duplicates() {
    return duplicates;
  }

  /** Batches a retried attempt produced but did not hand over again (same JVM). */
  long refused() {
    return refused;
  }
}
