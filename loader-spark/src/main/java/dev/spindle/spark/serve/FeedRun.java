package dev.spindle.spark.serve;

import dev.spindle.spark.batch.BatchSchema;
import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.metrics.QuarantineRecord;
import dev.spindle.spark.plan.EpochPlan;
import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.plan.TokenBudget;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.shard.CacheCounts;
import dev.spindle.spark.shard.IoCounts;
import dev.spindle.spark.shard.Sample;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task attempt's batch assembly: a planned batch's rows arrive decoded in place, in the batch
 * they are delivered in ({@link BatchTarget}: a ring slot, or a pooled Arrow batch); it fills the
 * rows of quarantined samples with stand-ins, gives stand-ins and padding the ignored label ({@link
 * BatchSchema#IGNORED_LABEL}) and weight 0, checks the batch against the plan and accounts for it
 * ({@link SliceAccount}, one per slice), and hands it to the consumer unless this JVM's consumer
 * already had it. Counts the image bytes it copies on the host (stand-ins). Task thread only.
 */
final class FeedRun {
  private static final Logger LOG = LoggerFactory.getLogger(FeedRun.class);

  private final String runId;
  private final BatchTargets targets;
  private final long rowBytes;
  private final List<FieldSpec> extras;
  private final BatchConsumer consumer;
  private final EpochPlan plan;
  private final List<FeedSlice> slices;
  private final PlannedBatches planned = new PlannedBatches();
  private final List<SliceAccount> accounts = new ArrayList<>();
  private final List<QuarantineRecord> quarantined = new ArrayList<>();
  private long firstBatchEpochMs;
  private long hostCopyBytes;

  /** {@code slices}: what the task produces, in order, from {@code plan}. */
  FeedRun(
      String runId,
      FeedSettings settings,
      BatchTargets targets,
      BatchConsumer consumer,
      EpochPlan plan,
      List<FeedSlice> slices) {
    this.runId = runId;
    this.targets = targets;
    // bytes of one delivered image, the unit of host copies: none without images
    this.rowBytes = settings.hasImage() ? settings.sample().images().rowBytes() : 0;
    this.extras = settings.sample().extras();
    this.consumer = consumer;
    this.plan = plan;
    this.slices = List.copyOf(slices);
  }

  /**
   * Delivers the batch whose rows, in order, are {@code rows}: their pixels are already in the
   * batch they were decoded into ({@link Row#into()}); the rows of quarantined samples get
   * stand-ins, every row its label, key, index and weight; then the batch is checked, accounted and
   * handed over, and given up (given back, or its slot abandoned if it was not handed over).
   */
  void produce(RankPlan rank, List<Decoded<Row>> rows) throws InterruptedException {
    int k = rows.get(0).item().batch();
    int size = rank.batchRows(k);
    if (rows.size() != size || rows.get(size - 1).item().batch() != k) {
      throw new IllegalStateException(
          "Batch " + rank.batchKey(k) + " arrived with " + rows.size() + " rows, planned " + size);
    }
    BatchTarget into = rows.get(0).item().into();
    try {
      BitSet bad = badRows(rows, into);
      String[] overBudget = overBudget(rows, bad);
      int firstGood = bad.nextClearBit(0) < size ? bad.nextClearBit(0) : -1;
      int padded = rank.paddedIn(k);
      for (int r = 0; r < size; r++) {
        Row row = rows.get(r).item();
        Sample s = row.sample();
        boolean standIn = bad.get(r);
        if (standIn) {
          String why = overBudget[r] != null ? overBudget[r] : rows.get(r).problem();
          quarantine(new QuarantineRecord(s.shard(), s.key(), row.index(), why));
          if (into.rowBytes() > 0) {
            standIn(into, r, firstGood); // a batch without images has no pixels to fill
          }
        }
        // stand-ins and padding (a repeat) carry the label the loss ignores, and weight 0
        boolean ignored = standIn || r >= size - padded;
        into.setRow(
            r, ignored ? BatchSchema.IGNORED_LABEL : s.label(), s.key(), row.index(), !ignored);
        if (!extras.isEmpty() && !standIn) {
          into.setFields(r, s.fields()); // a stand-in's stay empty (weight 0)
        }
      }
      deliver(into.batch(rank.batchKey(k), size, padded, bad));
    } finally {
      targets.done(into);
    }
  }

  /**
   * Per row, why its sample is over the token budget ({@code spark.spindle.batchTokens}): such a
   * sample is planned as a batch of its own and quarantined here (its row a stand-in, no tokens),
   * so that no batch a trainer gets holds more tokens than the budget. Marks those rows in {@code
   * bad}; null entries for the others, and all null without a budget.
   */
  private String[] overBudget(List<Decoded<Row>> rows, BitSet bad) {
    String[] why = new String[rows.size()];
    TokenBudget budget = plan.spec().budget();
    int column = budget == null ? -1 : fieldColumn(budget.field());
    for (int r = 0; column >= 0 && r < rows.size(); r++) {
      List<Object> values = rows.get(r).item().sample().fields();
      if (!bad.get(r) && values.size() > column && values.get(column) != null) {
        int length = java.lang.reflect.Array.getLength(values.get(column));
        if (length > budget.tokens()) {
          bad.set(r);
          why[r] =
              String.format(
                  "field '%s' holds %d tokens, more than the batch token budget of %d"
                      + " (spark.spindle.batchTokens): a sample a batch cannot hold",
                  budget.field(), length, budget.tokens());
        }
      }
    }
    return why;
  }

  private int fieldColumn(String field) {
    for (int i = 0; i < extras.size(); i++) {
      if (extras.get(i).name().equals(field)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The rows whose sample is quarantined; fails unless every other row was written into {@code
   * into} (its pixels placed there; into a batch without images, only its place: nothing is
   * decoded).
   */
  private static BitSet badRows(List<Decoded<Row>> rows, BatchTarget into) {
    BitSet bad = new BitSet(rows.size());
    for (int r = 0; r < rows.size(); r++) {
      Decoded<Row> d = rows.get(r);
      if (d.problem() != null) {
        bad.set(r);
      } else if ((into.rowBytes() > 0 && !d.placed())
          || d.item().into() != into
          || d.item().row() != r) {
        throw new IllegalStateException(
            "Row " + r + " (" + d.item().describe() + ") was not decoded into its batch's row");
      }
    }
    return bad;
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
  }

  /**
   * Fills the pixels of a quarantined sample's row: those of the batch's first good row {@code
   * sourceRow} (zeros when no row is good, {@code sourceRow} -1). The copy is counted: it is a host
   * copy, if a rare one.
   */
  private void standIn(BatchTarget into, int row, int sourceRow) {
    ArrowBuf data = into.pixels();
    long rowBytes = into.rowBytes();
    if (sourceRow < 0) {
      data.setZero(row * rowBytes, rowBytes);
    } else {
      data.setBytes(row * rowBytes, data, sourceRow * rowBytes, rowBytes);
      hostCopyBytes += rowBytes;
    }
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
  TaskOutcome outcome(
      long samplesRead,
      long bytesIn,
      long imagesDecoded,
      long pathCopyBytes,
      IoCounts io,
      CacheCounts cache) {
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
        runs,
        quarantined,
        samplesRead,
        bytesIn,
        imagesDecoded,
        firstBatchEpochMs,
        null,
        hostCopyBytes + pathCopyBytes,
        rowBytes,
        io,
        cache);
  }
}
