package dev.spindle.spark.feed;

import dev.spindle.spark.manifest.Manifest;
import dev.spindle.spark.plan.Digest;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.serve.BatchRun;
import dev.spindle.spark.serve.FeedSlice;
import dev.spindle.spark.serve.PlannedBatches;
import dev.spindle.spark.serve.TaskOutcome;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code bench plan}'s figures for what {@code feed} returns to the driver per epoch and what the
 * driver does with it, on the bench's plan, with as many partitions as ranks (the default on a
 * cluster with a core per rank). For a task: {@code task_digest_s} (hash the last rank's whole
 * epoch, derived from the plan, as the task that ends a rank's share does at most) and {@code
 * task_result_bytes} (its result Java-serialized, as Spark ships it: one {@link BatchRun}). For the
 * driver: {@code epoch_result_runs} and {@code epoch_result_bytes} (every task's result of the
 * epoch, each serialized on its own), {@code driver_ledger_s}, {@code driver_ledger_cpu_s} and
 * {@code driver_ledger_heap_mb} ({@link FeedLedger} taking them all and checking every rank: every
 * byte its thread allocated). The runs carry stand-in digests, one per rank, of the real one's
 * length (the ledger compares digests only between reports of the same run), so the bench hashes
 * one rank, not the epoch. A benchmark: it reports, it asserts nothing. Driver thread.
 */
public final class FeedResultBench {
  private FeedResultBench() {}

  /** Adds the figures to {@code report}. */
  public static void measure(Manifest manifest, EpochPlan plan, Map<String, Object> report)
      throws IOException {
    RankPlan last = plan.rank(plan.worldSize() - 1);
    long cpu = cpuNanos();
    long start = System.nanoTime();
    Digest digest = new Digest();
    PlannedBatches.hash(last, 0, last.batches(), digest);
    String hex = digest.hex();
    report.put("task_digest_s", seconds(start));
    report.put("task_digest_cpu_s", (cpuNanos() - cpu) / 1e9);
    report.put(
        "task_result_bytes",
        serialize(outcome(plan, List.of(new FeedSlice(last.rank(), 0, last.batches())), hex))
            .length);
    List<TaskOutcome> outcomes = new ArrayList<>();
    long bytes = 0;
    long runs = 0;
    for (List<FeedSlice> p : FeedPartitions.split(plan, plan.batchesPerRank(), plan.worldSize())) {
      TaskOutcome o = outcome(plan, p, hex);
      outcomes.add(o);
      bytes += serialize(o).length;
      runs += o.runs().size();
    }
    report.put("epoch_result_runs", runs);
    report.put("epoch_result_bytes", bytes);
    ledger(plan, outcomes, report);
  }

  private static void ledger(
      EpochPlan plan, List<TaskOutcome> outcomes, Map<String, Object> report) {
    long allocated = allocatedBytes();
    long cpu = cpuNanos();
    long start = System.nanoTime();
    int[] from = new int[plan.worldSize()];
    FeedLedger ledger = new FeedLedger(plan, from, plan.batchesPerRank());
    outcomes.forEach(ledger::add);
    int ranks = ledger.results().size();
    report.put("driver_ledger_s", seconds(start));
    report.put("driver_ledger_cpu_s", (cpuNanos() - cpu) / 1e9);
    report.put("driver_ledger_heap_mb", (allocatedBytes() - allocated) / 1048576.0);
    report.put("driver_ledger_ranks", ranks);
  }

  /** A task's outcome for {@code slices}, its runs carrying digests of {@code digest}'s length. */
  private static TaskOutcome outcome(EpochPlan plan, List<FeedSlice> slices, String digest) {
    List<BatchRun> runs = new ArrayList<>(slices.size());
    for (FeedSlice s : slices) {
      RankPlan rank = plan.rank(s.rank());
      long padded = 0;
      for (int k = s.fromBatch(); k < s.toBatch(); k++) {
        padded += rank.paddedIn(k);
      }
      // one digest per rank, as real runs carry: Java serialization writes a repeated string once
      String own = digest.substring(0, 56) + String.format("%08x", s.rank());
      runs.add(
          new BatchRun(
              rank.batchKey(s.fromBatch()),
              s.toBatch(),
              rank.batchSize(),
              padded,
              0,
              0,
              s.digestFrom(),
              own));
    }
    return new TaskOutcome(runs, List.of(), 0, 0, 0, 0, null, 0, 0);
  }

  private static byte[] serialize(Serializable object) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(object);
    }
    return bytes.toByteArray();
  }

  private static double seconds(long since) {
    return (System.nanoTime() - since) / 1e9;
  }

  private static long cpuNanos() {
    return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
  }

  private static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getCurrentThreadAllocatedBytes();
  }
}
