package dev.spindle.spark.serve;

import dev.spindle.spark.plan.RankPlan;
import dev.spindle.spark.plan.ReadPlan;
import dev.spindle.spark.shard.CacheCounts;
import dev.spindle.spark.shard.IoCounters;
import dev.spindle.spark.shard.IoCounts;
import dev.spindle.spark.shard.IoSettings;
import dev.spindle.spark.shard.Sample;
import dev.spindle.spark.shard.SampleLimits;
import dev.spindle.spark.shard.Shard;
import dev.spindle.spark.shard.ShardReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rows of a task's slices in plan order (slice by slice, batch by batch, row by row). Per group
 * of {@code readBatches} batches it reads only the planned samples, passing over the others at the
 * index level ({@link ShardReader#open(Shard, Configuration, SampleLimits, int[], IoSettings,
 * IoCounters)}: an indexed tar has only their bytes read, by ranged reads that start when its
 * reader is opened, and every shard of the group is opened before the first is consumed, so the
 * group's reads overlap); a planned sample the shard does not yield becomes a row with a problem
 * ({@link Sample#unread}), quarantined downstream (a damaged tar's damage is a sample with a
 * problem too). A storage error fails the task, naming the shard, so Spark retries it. Each batch's
 * first row claims the batch its rows are decoded into ({@link BatchTargets}: a ring slot, waiting
 * while the ring is full). Pulled by one thread at a time (the pipeline's source thread; {@code
 * train} reads an epoch's first group on a thread of its own, before the source has its targets:
 * {@link FeedTask#readAhead}); the counters may be read by any thread.
 */
final class RowSource implements Iterator<Row> {
  private static final Logger LOG = LoggerFactory.getLogger(RowSource.class);

  private final FeedInputs in;
  private final List<FeedSlice> slices;
  private final int readBatches;
  private final SampleLimits limits;
  private final Configuration conf;
  private final IoSettings io;
  private final IoCounters counters = new IoCounters();
  private int slice = -1;
  private RankPlan rank;
  private long[] sliceIndices;

  /** Where each batch of the slice begins in {@link #sliceIndices}, then their end. */
  private int[] sliceRows;

  private int sliceStart;
  private int groupStart;
  private int groupEnd;
  private Sample[] slots;
  private int next;

  /** The batch that row {@link #next} of the group belongs to. */
  private int batch;

  private volatile long samplesRead;
  private volatile long bytesIn;
  private volatile long copiedBytes;
  private volatile CacheCounts cache = CacheCounts.NONE;
  private BatchTargets targets;
  private BatchTarget into;
  private Runnable whenRead;
  private boolean allRead;

  /** Give it its targets ({@link #into}) before its first row is taken. */
  RowSource(FeedInputs in, List<FeedSlice> slices, FeedSettings settings, Configuration conf) {
    this.in = in;
    this.slices = List.copyOf(slices);
    this.readBatches = settings.readBatches();
    this.limits = settings.sample().limits();
    this.conf = conf;
    this.io = settings.io();
  }

  /**
   * Where each batch is decoded, claimed as its first row is reached; {@code whenRead}, if not
   * null, runs on the pulling thread once the last group was read (what is left is handing out its
   * rows; at once if that group was read ahead). Before the first row is taken.
   */
  RowSource into(BatchTargets targets, Runnable whenRead) {
    this.targets = targets;
    this.whenRead = whenRead;
    if (allRead) {
      allDone();
    }
    return this;
  }

  /** The slices whose rows this source gives. */
  List<FeedSlice> slices() {
    return slices;
  }

  @Override
  public boolean hasNext() {
    while (slots == null || next == slots.length) {
      if (!nextGroup()) {
        return false;
      }
    }
    return true;
  }

  @Override
  public Row next() {
    if (!hasNext()) {
      throw new NoSuchElementException("No more rows");
    }
    int groupFirst = sliceRows[groupStart - sliceStart];
    while (groupFirst + next >= sliceRows[batch + 1 - sliceStart]) {
      batch++; // batches of a token budget vary in rows
    }
    int row = next - (sliceRows[batch - sliceStart] - groupFirst);
    long index = sliceIndices[groupFirst + next];
    if (row == 0) {
      into = claim(rank.rank());
    }
    boolean last = groupFirst + next + 1 == sliceRows[batch + 1 - sliceStart];
    Sample sample = slots[next];
    slots[next++] = null; // the group holds no sample handed on: the next group reads beside fewer
    return new Row(rank.rank(), batch, row, index, sample, into, last);
  }

  /** The batch to decode the next one into; waits while none is free (backpressure). */
  private BatchTarget claim(int rankIndex) {
    try {
      return targets.claim(rankIndex);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.util.concurrent.CancellationException(
          "Interrupted waiting for a batch to decode rank " + rankIndex + "'s next one into");
    }
  }

  long samplesRead() {
    return samplesRead;
  }

  long bytesIn() {
    return bytesIn;
  }

  /** What the shard readers asked of storage so far. */
  IoCounts io() {
    return counters.counts();
  }

  /** Image bytes the shard readers copied into samples (a preprocess output's stored pixels). */
  long copiedBytes() {
    return copiedBytes;
  }

  /** What the shard cache did for this task's opens and reads. */
  CacheCounts cacheCounts() {
    return cache;
  }

  private boolean nextGroup() {
    if (rank == null || groupEnd == slices.get(slice).toBatch()) {
      if (++slice == slices.size()) {
        return false;
      }
      FeedSlice s = slices.get(slice);
      rank = in.plan().rank(s.rank());
      // The task derives its slice here, from the windows it overlaps; the plan holds no indices.
      sliceIndices = rank.indices(s.fromBatch(), s.toBatch());
      sliceStart = s.fromBatch();
      sliceRows = new int[s.toBatch() - s.fromBatch() + 1];
      for (int k = s.fromBatch(); k < s.toBatch(); k++) {
        sliceRows[k - sliceStart + 1] = sliceRows[k - sliceStart] + rank.batchRows(k);
      }
      groupEnd = s.fromBatch();
    }
    groupStart = groupEnd;
    groupEnd = Math.min(slices.get(slice).toBatch(), groupStart + readBatches);
    int from = sliceRows[groupStart - sliceStart];
    slots =
        read(
            ReadPlan.of(in.offsets(), sliceIndices, from, sliceRows[groupEnd - sliceStart] - from));
    next = 0;
    batch = groupStart;
    if (slice == slices.size() - 1 && groupEnd == slices.get(slice).toBatch()) {
      allRead = true;
      allDone();
    }
    return true;
  }

  private void allDone() {
    Runnable r = whenRead;
    whenRead = null;
    if (r != null) {
      r.run();
    }
  }

  /**
   * The encoded samples of one read plan, by output slot; repeats share one sample. Every indexed
   * tar's reader is opened before the first shard is consumed, so the ranged reads of all the
   * group's indexed shards are in flight at once (other readers are opened in turn, as each holds
   * its resources from its open on) ({@link ShardReader#open(Shard, Configuration, SampleLimits,
   * int[], IoSettings, IoCounters)}).
   */
  private Sample[] read(ReadPlan plan) {
    Sample[] out = new Sample[plan.outputSize()];
    List<ReadPlan.ShardRead> reads = plan.shards();
    ShardReader[] readers = new ShardReader[reads.size()];
    try {
      for (int k = 0; k < readers.length; k++) {
        if (io.readsAhead(shard(reads.get(k)))) {
          readers[k] = open(shard(reads.get(k)), reads.get(k));
        }
      }
      for (int k = 0; k < readers.length; k++) {
        if (readers[k] == null) { // a reader that reads when consumed: opened when its turn comes
          readers[k] = open(shard(reads.get(k)), reads.get(k));
        }
        readShard(shard(reads.get(k)), reads.get(k), readers[k], out);
        close(shard(reads.get(k)), readers[k]);
        readers[k] = null;
      }
    } finally {
      for (int k = 0; k < readers.length; k++) {
        closeQuietly(readers[k]);
      }
    }
    int[] repeats = plan.repeatSlots();
    int[] sources = plan.repeatSources();
    for (int i = 0; i < repeats.length; i++) {
      out[repeats[i]] = out[sources[i]];
    }
    return out;
  }

  private Shard shard(ReadPlan.ShardRead r) {
    return in.manifest().shards().get(r.shard());
  }

  private ShardReader open(Shard shard, ReadPlan.ShardRead r) {
    try {
      return ShardReader.open(shard, conf, limits, r.positions(), io, counters);
    } catch (IOException | RuntimeException e) {
      throw failed(shard, e);
    }
  }

  private void readShard(Shard shard, ReadPlan.ShardRead r, ShardReader reader, Sample[] out) {
    int[] positions = r.positions();
    int i = 0;
    try {
      while (reader.hasNext()) {
        Sample s = reader.next();
        for (; i < positions.length && positions[i] < s.position(); i++) {
          out[r.slots()[i]] = Sample.unread(shard, positions[i], null);
        }
        if (i < positions.length && positions[i] == s.position()) {
          out[r.slots()[i++]] = s;
          samplesRead++;
          bytesIn += s.image() == null ? 0 : s.image().length;
        }
      }
      for (; i < positions.length; i++) {
        out[r.slots()[i]] = Sample.unread(shard, positions[i], reader.damage());
      }
      copiedBytes += reader.copiedImageBytes();
      cache = cache.plus(reader.cacheCounts());
    } catch (RuntimeException e) {
      throw failed(shard, e);
    }
  }

  private void close(Shard shard, ShardReader reader) {
    try {
      reader.close();
    } catch (IOException e) {
      throw failed(shard, e);
    }
  }

  /** A reader left open by a failure: closed quietly, the failure is the one to report. */
  private static void closeQuietly(ShardReader reader) {
    if (reader != null) {
      try {
        reader.close();
      } catch (IOException | RuntimeException e) {
        LOG.debug("Closing a shard reader after a failure: {}", e.toString());
      }
    }
  }

  private static UncheckedIOException failed(Shard shard, Exception e) {
    LOG.error("Failed reading shard {}: {}", shard.displayName(), e.toString());
    return new UncheckedIOException(
        new IOException("Failed reading shard " + shard.displayName() + ": " + e.getMessage(), e));
  }
}
