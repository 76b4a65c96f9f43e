package dev.spindle.spark.feed;

import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.metrics.QuarantineRecord;
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
 * One task attempt's batch assembly: copies a planned batch's decoded rows into the reusable
 * Arrow batch, fills the rows of quarantined samples with stand-ins, and hands the batch to the
 * consumer unless this JVM's consumer already had it. Task thread only.
 */
final class FeedRun {
  private static final Logger LOG = LoggerFactory.getLogger(FeedRun.class);

  private final String runId;
  private final FeedSettings settings;
  private final ImageBatch batch;
  private final BatchConsumer consumer;
  private final List<BatchRecord> records = new ArrayList<>();
  private final List<QuarantineRecord> quarantined = new ArrayList<>();
  private long firstBatchEpochMs;

  FeedRun(String runId, FeedSettings settings, ImageBatch batch, BatchConsumer consumer) {
    this.runId = runId;
    this.settings = settings;
    this.batch = batch;
    this.consumer = consumer;
  }

  /** Builds and delivers the batch whose rows, in order, are {@code rows}. */
  void produce(RankPlan rank, List<Decoded<Row>> rows) throws InterruptedException {
    int size = rank.batchSize();
    int k = rows.get(0).item().batch();
    if (rows.size() != size || rows.get(size - 1).item().batch() != k) {
      throw new IllegalStateException("Batch " + rank.batchKey(k) + " arrived with "
          + rows.size() + " rows, planned " + size);
    }
    BitSet bad = SamplePath.fill(batch, rows);
    for (int r = bad.nextSetBit(0); r >= 0; r = bad.nextSetBit(r + 1)) {
      Row row = rows.get(r).item();
      Sample s = row.sample();
      quarantine(new QuarantineRecord(s.shard(), s.key(), row.index(), rows.get(r).problem()));
    }
    int firstGood = bad.nextClearBit(0) < size ? bad.nextClearBit(0) : -1;
    for (int r = bad.nextSetBit(0); r >= 0; r = bad.nextSetBit(r + 1)) {
      standIn(r, firstGood < 0 ? null : rows.get(firstGood).item().sample(), firstGood,
          rows.get(r).item().index());
    }
    batch.seal(size);
    deliver(new FeedBatch(rank.batchKey(k), batch.root(), rank.paddedIn(k), bad));
  }

  private void deliver(FeedBatch fb) throws InterruptedException {
    boolean fresh = DeliveryRegistry.claim(runId, fb.key());
    if (fresh) {
      consumer.accept(fb);
      if (firstBatchEpochMs == 0) {
        firstBatchEpochMs = System.currentTimeMillis();
      }
    } else {
      LOG.info("Batch {} was already delivered in this JVM; not delivered again", fb.key());
    }
    records.add(new BatchRecord(fb.key(), fb.indices(), fb.padded(),
        fb.substituted().cardinality(), fresh));
    batch.reset();
    if (settings.testDelayMs() > 0) {
      Thread.sleep(settings.testDelayMs());
    }
  }

  /**
   * Fills the row of a quarantined sample with the batch's first good row (image, label, key),
   * keeping the planned index; zeros and label -1 when no row of the batch is good.
   */
  private void standIn(int row, Sample source, int sourceRow, long index) {
    ArrowBuf data = batch.imageData();
    long rowBytes = batch.rowBytes();
    if (source == null) {
      data.setZero(row * rowBytes, rowBytes);
      batch.setRow(row, -1, "", index);
    } else {
      data.setBytes(row * rowBytes, data, sourceRow * rowBytes, rowBytes);
      batch.setRow(row, source.label(), source.key(), index);
    }
  }

  private void quarantine(QuarantineRecord record) {
    if (quarantined.size() < 3) {
      LOG.warn("Quarantined {}", record.describe());
    }
    quarantined.add(record);
  }

  TaskOutcome outcome(long samplesRead, long bytesIn, long imagesDecoded) {
    return new TaskOutcome(records, quarantined, samplesRead, bytesIn, imagesDecoded,
        firstBatchEpochMs, null);
  }
}
