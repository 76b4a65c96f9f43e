package dev.spindle.spark.image;

import dev.spindle.spark.pipeline.ExecutorPools;
import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.pipeline.LastBatch;
import dev.spindle.spark.pipeline.Order;
import dev.spindle.spark.pipeline.Pipeline;
import dev.spindle.spark.pipeline.PipelineIterator;
import dev.spindle.spark.plan.SplitMix64;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The image benchmark on Spindle's executor engine ({@code dev.spindle.spark.pipeline}): epoch
 * positions → pipe "decode+transform" (CPU pool, {@code threads} in flight, input order), each
 * image written in place into its row of a batch buffer ({@link RowSlots}) → aggregate into batches
 * of rows → the consumer gets that batch buffer itself, no copy. Only when a sample failed
 * (quarantined, counted) and so shifted the grouping of the rows after it does the consumer copy
 * the rows of a batch into its own buffer. Queues are bounded in bytes (one batch each); batch
 * buffers are pooled. One consumer thread; owns its pools and buffers.
 */
final class EngineLoader implements BenchLoader {
  private final List<BenchInput.Sample> samples;
  private final ImageTransform transform;
  private final int threads;
  private final int batchSize;
  private final BufferAllocator allocator;
  private final ExecutorPools pools;
  private final RowSlots slots;
  private ArrowBuf spare;
  private PipelineIterator<List<RowSlots.Row>> running;
  private List<RowSlots.Row> held;
  private long quarantinedBefore;
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
    this.slots = new RowSlots(allocator, batchSize, transform.outputBytes(), 3);
    this.pools = ExecutorPools.create("spindle-image", threads);
  }

  @Override
  public void startEpoch(long seed, long epoch) {
    stopRunning();
    int[] order = shuffled(samples.size(), SampleRandom.of(seed, epoch, -1));
    ImageTransform t = transform.withSeed(seed).forEpoch(epoch);
    long bytes = transform.outputBytes();
    slots.restart(order.length);
    running =
        Pipeline.source("positions", IntStream.range(0, order.length).iterator())
            .pools(pools)
            .pipe(
                "decode+transform",
                (Integer p) -> decode(t, p, order[p]),
                inFlight(threads),
                Order.INPUT)
            .sizedBy(row -> bytes)
            .aggregate("batch", batchSize, LastBatch.KEEP)
            .sizedBy(rows -> rows.size() * bytes)
            .queueBytes(batchSize * bytes)
            .failureBudget(FailureBudget.count(Long.MAX_VALUE))
            .build()
            .start();
  }

  /**
   * Items the decode stage may hold for {@code threads} pool threads: in input order a finished
   * image waits for every earlier one, and with only one per thread a thread would idle behind a
   * slower image (head-of-line blocking); more slots let it start the next image meanwhile.
   */
  static int inFlight(int threads) {
    return 4 * threads;
  }

  /** Decodes sample {@code index} (epoch position {@code position}) into its row. */
  private RowSlots.Row decode(ImageTransform t, int position, int index) throws Exception {
    RowSlots.Row row = slots.claim(position);
    try {
      byte[] data = samples.get(index).read();
      t.apply(data, 0, data.length, index, row.buffer(), row.offset());
      return row;
    } catch (Exception | Error e) {
      row.close();
      throw e;
    }
  }

  @Override
  public ArrowBuf next() {
    release();
    if (!running.hasNext()) {
      return null;
    }
    List<RowSlots.Row> rows = running.next();
    lastSize = rows.size();
    ArrowBuf whole = slots.whole(rows);
    if (whole != null) {
      held = rows;
      return whole;
    }
    // a quarantined sample shifted this batch's rows: gather them into a buffer of our own
    try {
      if (spare == null) {
        spare = allocator.buffer(batchSize * slots.rowBytes());
      }
      for (int i = 0; i < rows.size(); i++) {
        RowSlots.Row r = rows.get(i);
        spare.setBytes(i * slots.rowBytes(), r.buffer(), r.offset(), slots.rowBytes());
      }
    } finally {
      rows.forEach(RowSlots.Row::close);
    }
    return spare;
  }

  @Override
  public int lastSize() {
    return lastSize;
  }

  @Override
  public void release() {
    if (held != null) {
      held.forEach(RowSlots.Row::close);
      held = null;
    }
  }

  @Override
  public long quarantined() {
    return quarantinedBefore + (running == null ? 0 : running.quarantine().size());
  }

  private void stopRunning() {
    if (running != null) {
      quarantinedBefore += running.quarantine().size();
      running.close();
      running = null;
    }
  }

  @Override
  public void close() {
    release();
    stopRunning();
    pools.close();
    slots.close();
    if (spare != null) {
      spare.close();
    }
  }

  private static int[] shuffled(int n, SplitMix64 rng) {
    int[] order = IntStream.range(0, n).toArray();
    rng.shuffle(order);
    return order;
  }
}
