package dev.spindle.spark.serve;

import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.SamplePath;
import dev.spindle.spark.shard.Sample;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task attempt's batch assembly: copies a planned batch's decoded rows into the reusable Arrow
 * batch, fills the rows of quarantined samples with stand-ins, gives stand-ins and padding the
 * ignored label ({@link BatchSchema#IGNORED_LABEL}), checks it against the plan and accounts for it
 * ({@link SliceAccount}, one per slice), and hands it to the consumer unless this JVM's consumer
 * already had it. Task thread only.
 */
final class FeedRun {
  private static final Logger LOG = LoggerFactory.getLogger(FeedRun.class);

  private final String runId;
  private final ImageBatch batch;
  private final BatchConsumer consumer;
  private final EpochPlan plan;
  private final List<FeedSlice> slices;
  private final PlannedBatches planned = new PlannedBatches();
  private final List<SliceAccount> accounts = new ArrayList<>();
  private final List<QuarantineRecord> quarantined = new ArrayList<>();
  private long firstBatchEpochMs;

  /** {@code slices}: what the task produces, in order, from {@code plan}. */
  FeedRun(
      String runId,
      ImageBatch batch,
      BatchConsumer consumer,
      EpochPlan plan,
      List<FeedSlice> slices) {
    this.runId = runId;
    this.batch = batch;
    this.consumer = consumer;
    this.plan = plan;
    this.slices = List.copyOf(slices);
  }

  /** Builds and delivers the batch whose rows, in order, are {@code rows}. */
  void produce(RankPlan rank, List<Decoded<Row>> rows) throws InterruptedException {
    int size = rank.batchSize();
    int k = rows.get(0).item().batch();
    if (rows.size() != size || rows.get(size - 1).item().batch() != k) {
      throw new IllegalStateException(
          "Batch " + rank.batchKey(k) + " arrived with " + rows.size() + " rows, planned " + size);
    }
    BitSet bad = SamplePath.fill(batch, rows);
    for (int r = bad.nextSetBit(0); r >= 0; r = bad.nextSetBit(r + 1)) {
      Row row = rows.get(r).item();
      Sample s = row.sample();
      quarantine(new QuarantineRecord(s.shard(), s.key(), row.index(), rows.get(r).problem()));
      standIn(r, bad.nextClearBit(0) < size ? bad.nextClearBit(0) : -1, s.key(), row.index());
    }
    for (int r = size - rank.paddedIn(k); r < size; r++) {
      batch.setLabel(r, BatchSchema.IGNORED_LABEL); // padding: a repeat the loss must ignore
    }
    batch.seal(size);
    deliver(new FeedBatch(rank.batchKey(k), batch.root(), rank.paddedIn(k), bad));
  }

  private void deliver(FeedBatch fb) throws InterruptedException {
    SliceAccount account = accountFor(fb);
    account.take(fb); // a batch that is not the planned one fails here, before anyone has it
    boolean fresh = DeliveryRegistry.claim(runId, fb.key());
    if (fresh) {
      consumer.accept(fb);
      if (firstBatchEpochMs == 0) {
        firstBatchEpochMs = System.currentTimeMillis();
      }
    } else {
      LOG.info("Batch {} was already delivered in this JVM; not delivered again", fb.key());
    }
    if (!fresh) {
      account.notRedelivered();
    }
    batch.reset();
  }

  /**
   * Fills the row of a quarantined sample: the pixels of the batch's first good row {@code
   * sourceRow} (zeros when no row is good, {@code sourceRow} -1), the ignored label, and the
   * quarantined sample's own key and planned index, as the quarantine list names it.
   */
  private void standIn(int row, int sourceRow, String key, long index) {
    ArrowBuf data = batch.imageData();
    long rowBytes = batch.rowBytes();
    if (sourceRow < 0) {
      data.setZero(row * rowBytes, rowBytes);
    } else {
      data.setBytes(row * rowBytes, data, sourceRow * rowBytes, rowBytes);
    }
    batch.setRow(row, BatchSchema.IGNORED_LABEL, key, index);
  }

  /** Samples quarantined so far. */
  long quarantined() {
    return quarantined.size();
  }

  private void quarantine(QuarantineRecord record) {
    if (quarantined.size() < 3) {
      LOG.warn("Quarantined {}", record.describe());
    }
    quarantined.add(record);
  }

  /** The account of {@code fb}'s slice: the current one, or the next when it is complete. */
  private SliceAccount accountFor(FeedBatch fb) {
    SliceAccount current = accounts.isEmpty() ? null : accounts.get(accounts.size() - 1);
    if (current != null && !current.complete()) {
      return current;
    }
    int i = accounts.size();
    while (i < slices.size() && slices.get(i).fromBatch() == slices.get(i).toBatch()) {
      accounts.add(null); // an empty slice: nothing to produce, nothing to report
      i++;
    }
    if (i == slices.size()) {
      throw new IllegalStateException(
          "Batch "
              + fb.key()
              + " arrived after the task's last"
              + " slice was complete (slices "
              + slices
              + ")");
    }
    SliceAccount next = new SliceAccount(slices.get(i), plan.rank(slices.get(i).rank()), planned);
    accounts.add(next);
    return next;
  }

  /**
   * What the task reports: one run per slice, never the batches' indices. Fails, naming the first
   * missing batch, unless every slice was produced whole.
   */
  TaskOutcome outcome(long samplesRead, long bytesIn, long imagesDecoded) {
    List<BatchRun> runs = new ArrayList<>(slices.size());
    for (int i = 0; i < slices.size(); i++) {
      FeedSlice s = slices.get(i);
      SliceAccount a = i < accounts.size() ? accounts.get(i) : null;
      if (a == null && s.fromBatch() < s.toBatch()) {
        throw new IllegalStateException(
            "The task produced no batch of its slice "
                + s
                + ": batch "
                + plan.rank(s.rank()).batchKey(s.fromBatch())
                + " is missing");
      }
      if (a != null) {
        runs.add(a.run());
      }
    }
    return new TaskOutcome(
        runs, quarantined, samplesRead, bytesIn, imagesDecoded, firstBatchEpochMs, null);
  }
}
