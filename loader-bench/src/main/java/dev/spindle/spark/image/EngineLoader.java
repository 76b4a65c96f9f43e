package dev.spindle.spark.image;

import dev.spindle.spark.pipeline.ExecutorPools;
import dev.spindle.spark.plan.SplitMix64;
import dev.spindle.spark.samples.BatchImages;
import dev.spindle.spark.samples.Decoded;
import dev.spindle.spark.samples.IndexedSample;
import dev.spindle.spark.samples.PathSpec;
import dev.spindle.spark.samples.RowBatch;
import dev.spindle.spark.samples.RowTarget;
import dev.spindle.spark.samples.SamplePath;
import dev.spindle.spark.samples.SampleSettings;
import dev.spindle.spark.shard.Sample;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The image benchmark on the product's own sample path ({@link SamplePath}, the one {@code
 * preprocess}, {@code feed}, {@code train} and the DataSource run): the epoch's samples in shuffled
 * order, read on the path's source thread, each batch's first row claiming one of {@link #POOLED}
 * batch buffers ({@link RowBatch}; waiting while all are in use) → decode+transform on the loader's
 * own {@code threads} CPU threads, {@link SampleSettings#IN_FLIGHT_PER_THREAD} in flight each, each
 * image written straight into its row of that buffer, as the feed writes a ring slot → batches of
 * rows → the consumer gets that buffer itself, no copy. A sample that cannot be read or decoded is
 * kept in its place by the path, then dropped here and counted ({@link #quarantined}): the good
 * rows after it move up, and its batch is delivered with fewer rows. One consumer thread; owns its
 * pools and buffers.
 */
final class EngineLoader implements BenchLoader {
  /**
   * Batch buffers in use at most: the one the consumer holds and the one being decoded into. This
   * consumer only reads a value per image and gives its batch straight back, so a third (the feed's
   * read-ahead batch) would not be waited for, yet would hold 38.5 MB more of touched memory with
   * the default float32 224×224 batches of 64 (measured: peak RSS 255 → 295 MB).
   */
  static final int POOLED = 2;

  private final List<BenchInput.Sample> samples;
  private final ImageTransform transform;
  private final int threads;
  private final int batchSize;
  private final BufferAllocator allocator;
  private final ExecutorPools pools;
  private final ArrayDeque<ArrowBuf> free = new ArrayDeque<>();
  private final List<Batch> open = new ArrayList<>();
  private int made;
  private boolean closed;
  private SamplePath<Item> running;
  private Batch held;
  private long quarantined;
  private int lastSize;

  EngineLoader(
      List<BenchInput.Sample> samples,
      ImageTransform transform,
      int threads,
      int batchSize,
      BufferAllocator allocator) {
    this.samples = samples;
    this.transform = transform;
    this.threads = threads;
    this.batchSize = batchSize;
    this.allocator = allocator;
    this.pools = ExecutorPools.create("spindle-image", threads);
  }

  @Override
  public void startEpoch(long seed, long epoch) {
    stopRunning();
    int[] order = shuffled(samples.size(), SampleRandom.of(seed, epoch, -1));
    ImageTransform t = transform.withSeed(seed).forEpoch(epoch);
    PathSpec spec =
        PathSpec.keeping(
            "bench-images",
            BatchImages.decoding(t),
            batchSize,
            SampleSettings.IN_FLIGHT_PER_THREAD * threads);
    running = SamplePath.startOn(pools, spec, new Positions(order), allocator);
  }

  @Override
  public ArrowBuf next() {
    release();
    for (List<Decoded<Item>> rows = running.next(); rows != null; rows = running.next()) {
      rows.forEach(Decoded::close); // placed rows hold no pixels: this only ends their lease
      Batch into = rows.get(0).item().into();
      int good = compact(rows, into);
      if (good > 0) {
        held = into;
        lastSize = good;
        return into.pixels();
      }
      done(into);
    }
    return null;
  }

  /**
   * Drops the rows of {@code into} whose sample is bad (counted), moving the good rows after them
   * up; returns how many are good. Fails unless every good row was decoded into its own row.
   */
  private int compact(List<Decoded<Item>> rows, Batch into) {
    long rowBytes = into.rowBytes();
    int good = 0;
    for (int r = 0; r < rows.size(); r++) {
      Decoded<Item> d = rows.get(r);
      if (d.item().into() != into || d.item().row() != r) {
        throw new IllegalStateException(
            "Row " + r + " of a batch arrived out of place: " + d.item().id());
      }
      if (d.problem() != null) {
        quarantined++;
        continue;
      }
      if (!d.placed()) {
        throw new IllegalStateException(d.item().id() + " was not decoded into its batch's row");
      }
      if (good != r) {
        into.pixels().setBytes(good * rowBytes, into.pixels(), r * rowBytes, rowBytes);
      }
      good++;
    }
    return good;
  }

  @Override
  public int lastSize() {
    return lastSize;
  }

  @Override
  public void release() {
    if (held != null) {
      done(held);
      held = null;
    }
  }

  @Override
  public long quarantined() {
    return quarantined;
  }

  private void stopRunning() {
    if (running != null) {
      running.close();
      running = null;
    }
    held = null;
    List<Batch> left;
    synchronized (free) {
      left = List.copyOf(open);
      open.clear();
    }
    left.forEach(Batch::giveUp); // outside the lock: giving up takes it again (Batch.release)
  }

  @Override
  public void close() {
    stopRunning();
    pools.close();
    synchronized (free) {
      closed = true;
      free.forEach(ArrowBuf::close);
      free.clear();
      free.notifyAll();
    }
  }

  /** The batch the next {@code batchSize} positions are decoded into (source thread). */
  private Batch claim() {
    ArrowBuf buf;
    synchronized (free) {
      try {
        while (free.isEmpty() && made == POOLED && !closed) {
          free.wait();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CancellationException("Interrupted waiting for a batch buffer");
      }
      if (closed) {
        throw new IllegalStateException("The loader is closed");
      }
      if (free.isEmpty()) {
        made++;
      }
      buf = free.isEmpty() ? allocator.buffer(batchSize * transform.outputBytes()) : free.pop();
      Batch b = new Batch(buf);
      open.add(b);
      return b;
    }
  }

  /** The consumer is done with {@code b}. */
  private void done(Batch b) {
    synchronized (free) {
      open.remove(b);
    }
    b.giveUp();
  }

  private void giveBack(ArrowBuf buf) {
    synchronized (free) {
      if (closed) {
        buf.close(); // a buffer a late decode write held past close
      } else {
        free.push(buf);
        free.notifyAll();
      }
    }
  }

  private static int[] shuffled(int n, SplitMix64 rng) {
    int[] order = IntStream.range(0, n).toArray();
    rng.shuffle(order);
    return order;
  }

  /** A pooled batch buffer that rows are decoded into; back to the pool when given up. */
  private final class Batch extends RowBatch {
    private final ArrowBuf buf;

    Batch(ArrowBuf buf) {
      super(buf, transform.outputBytes(), batchSize);
      this.buf = buf;
    }

    @Override
    protected void release() {
      giveBack(buf);
    }
  }

  /**
   * One position of the epoch: sample {@code index}, read, and the row it is decoded into. Made on
   * the source thread, read by a decode thread.
   */
  private record Item(long index, Sample sample, Batch into, int row) implements IndexedSample {
    @Override
    public RowTarget target() {
      return into.row(row);
    }

    @Override
    public Item withoutImage() {
      return new Item(index, sample.withoutImage(), into, row);
    }

    @Override
    public String id() {
      return sample.key();
    }

    @Override
    public long bytes() {
      return sample.image() == null ? 0 : sample.image().length;
    }
  }

  /**
   * The epoch's positions in order, each sample read here; a batch's first position claims its
   * buffer. The path's source thread only.
   */
  private final class Positions implements Iterator<Item> {
    private final int[] order;
    private int position;
    private Batch into;

    Positions(int[] order) {
      this.order = order;
    }

    @Override
    public boolean hasNext() {
      return position < order.length;
    }

    @Override
    public Item next() {
      if (!hasNext()) {
        throw new NoSuchElementException("No more positions");
      }
      int row = position % batchSize;
      if (row == 0) {
        into = claim();
      }
      int index = order[position++];
      return new Item(index, read(samples.get(index), index), into, row);
    }

    /** The sample's bytes, or a sample with a problem (bad, counted) when they cannot be read. */
    private Sample read(BenchInput.Sample s, int index) {
      String shard = s.file().getFileName().toString();
      try {
        return new Sample(shard, s.key(), index, s.read(), s.key(), null, null);
      } catch (IOException e) {
        return new Sample(shard, s.key(), index, null, s.key(), null, "cannot read: " + e);
      }
    }
  }
}
