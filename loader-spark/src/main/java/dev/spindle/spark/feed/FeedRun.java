package dev.spindle.spark.feed;

import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.image.ImageException;
import dev.spindle.spark.image.ImageTransform;
import dev.spindle.spark.job.DecodeThreads;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.shard.Sample;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import org.apache.arrow.memory.ArrowBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task attempt's batch production: decodes a batch's samples on the JVM-wide decode pool
 * ({@link DecodeThreads}), at most {@code spark.spindle.threads} of this task's at a time, into
 * the reusable Arrow batch; fills the rows of quarantined samples with stand-ins; hands the
 * batch to the consumer unless this JVM's consumer already had it. Confined to the task thread,
 * except the rows that decoders fill (each decoder writes only its own row).
 */
final class FeedRun {
  private static final Logger LOG = LoggerFactory.getLogger(FeedRun.class);

  private final String runId;
  private final FeedSettings settings;
  private final ImageTransform transform;
  private final ImageBatch batch;
  private final BatchConsumer consumer;
  private final ExecutorService pool;
  private final Semaphore inFlight;
  private final List<BatchRecord> records = new ArrayList<>();
  private final List<QuarantineRecord> quarantined = new ArrayList<>();
  private long samplesRead;
  private long bytesIn;
  private long firstBatchEpochMs;
  private long decodeNanos;

  FeedRun(String runId, FeedSettings settings, ImageTransform transform,
      ImageBatch batch, BatchConsumer consumer) {
    this.runId = runId;
    this.settings = settings;
    this.transform = transform;
    this.batch = batch;
    this.consumer = consumer;
    this.pool = DecodeThreads.get(settings.threads());
    this.inFlight = new Semaphore(settings.threads() > 0 ? settings.threads() : DecodeThreads.size());
  }

  void countRead(Sample s) {
    samplesRead++;
    bytesIn += s.image() == null ? 0 : s.image().length;
  }

  /** Builds batch {@code k} of {@code rank} from {@code slots[from, from + batchSize)}. */
  void produce(RankPlan rank, int k, Sample[] slots, int from) throws InterruptedException {
    int size = rank.batchSize();
    String[] errors = decode(rank, k, slots, from);
    BitSet bad = new BitSet(size);
    int firstGood = -1;
    for (int row = 0; row < size; row++) {
      Sample s = slots[from + row];
      long index = rank.index(k * size + row);
      if (errors[row] != null) {
        bad.set(row);
        quarantine(new QuarantineRecord(s.shard(), s.key(), index, errors[row]));
      } else {
        firstGood = firstGood < 0 ? row : firstGood;
        batch.setRow(row, s.label(), s.key(), index);
      }
    }
    for (int row = bad.nextSetBit(0); row >= 0; row = bad.nextSetBit(row + 1)) {
      standIn(row, firstGood < 0 ? null : slots[from + firstGood], firstGood,
          rank.index(k * size + row));
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

  /** Decodes every usable sample of the batch into its row; returns per-row problems. */
  private String[] decode(RankPlan rank, int k, Sample[] slots, int from)
      throws InterruptedException {
    int size = rank.batchSize();
    String[] errors = new String[size];
    long[] nanos = new long[size];
    List<Future<?>> futures = new ArrayList<>(size);
    InterruptedException interrupted = null;
    for (int row = 0; row < size && interrupted == null; row++) {
      Sample s = slots[from + row];
      if (!s.usable()) {
        errors[row] = s.problem();
        continue;
      }
      try {
        inFlight.acquire();
      } catch (InterruptedException e) {
        interrupted = e;
        break;
      }
      int r = row;
      long index = rank.index(k * size + row);
      futures.add(pool.submit(() -> decodeOne(s, index, r, errors, nanos)));
    }
    awaitAll(futures, interrupted);
    for (long t : nanos) {
      decodeNanos += t;
    }
    return errors;
  }

  private void decodeOne(Sample s, long index, int row, String[] errors, long[] nanos) {
    long t0 = System.nanoTime();
    try {
      transform.apply(s.image(), 0, s.image().length, index, batch.imageData(),
          row * batch.rowBytes());
    } catch (ImageException e) {
      errors[row] = "cannot decode " + s.imageName() + ": " + e.getMessage();
    } catch (RuntimeException e) {
      errors[row] = "decoder failed on " + s.imageName() + ": " + e;
    } finally {
      nanos[row] = System.nanoTime() - t0;
      inFlight.release();
    }
  }

  /**
   * Waits for every submitted decode, even when interrupted: they write into this batch, which
   * must outlive them. Rethrows the first interrupt afterwards.
   */
  private static void awaitAll(List<Future<?>> futures, InterruptedException pending)
      throws InterruptedException {
    InterruptedException interrupted = pending;
    for (Future<?> f : futures) {
      while (true) {
        try {
          if (interrupted != null && f.cancel(false)) {
            break; // never started; the run ends with this interrupt
          }
          f.get();
          break;
        } catch (InterruptedException e) {
          interrupted = e;
        } catch (CancellationException e) {
          break;
        } catch (ExecutionException e) {
          throw new IllegalStateException("Decode task failed unexpectedly", e.getCause());
        }
      }
    }
    if (interrupted != null) {
      throw interrupted;
    }
  }

  private void quarantine(QuarantineRecord record) {
    if (quarantined.size() < 3) {
      LOG.warn("Quarantined {}", record.describe());
    }
    quarantined.add(record);
  }

  TaskOutcome outcome() {
    return new TaskOutcome(records, quarantined, samplesRead, bytesIn, firstBatchEpochMs,
        decodeNanos);
  }
}
