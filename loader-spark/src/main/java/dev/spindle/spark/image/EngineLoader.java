package dev.spindle.spark.image;

import dev.spindle.spark.pipeline.ExecutorPools;
import dev.spindle.spark.pipeline.FailureBudget;
import dev.spindle.spark.pipeline.Order;
import dev.spindle.spark.pipeline.Pipeline;
import dev.spindle.spark.pipeline.PipelineIterator;
import dev.spindle.spark.pipeline.Remainder;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The image benchmark on Spindle's executor engine ({@code dev.spindle.spark.pipeline}): epoch
 * positions → pipe "decode+transform" (CPU pool, {@code threads} in flight, input order) into one
 * Arrow buffer per image → aggregate into batches → the consumer copies each batch into one
 * contiguous, reused batch buffer (what the DataLoader's collate does) and frees the images.
 * Queues are bounded in bytes (two batches). One consumer thread; owns its pools and buffers.
 */
final class EngineLoader implements BenchLoader {
  private final List<BenchInput.Sample> samples;
  private final ImageTransform transform;
  private final int threads;
  private final int batchSize;
  private final BufferAllocator allocator;
  private final ExecutorPools pools;
  private final ArrowBuf batch;
  private PipelineIterator<List<ImageItem>> running;
  private long quarantinedBefore;
  private int lastSize;

  EngineLoader(List<BenchInput.Sample> samples, ImageTransform transform, int threads,
      int batchSize, BufferAllocator allocator) {
    this.samples = samples;
    this.transform = transform;
    this.threads = threads;
    this.batchSize = batchSize;
    this.allocator = allocator;
    this.batch = allocator.buffer(batchSize * transform.outputBytes());
    try {
      this.pools = ExecutorPools.create("spindle-image", threads);
    } catch (RuntimeException e) {
      batch.close();
      throw e;
    }
  }

  @Override
  public void startEpoch(long seed, long epoch) {
    stopRunning();
    int[] order = shuffled(samples.size(), SampleRandom.of(seed, epoch, -1));
    ImageTransform t = transform.withSeed(seed).forEpoch(epoch);
    long bytes = transform.outputBytes();
    running = Pipeline.source("positions", IntStream.range(0, order.length).iterator())
        .pools(pools)
        .pipe("decode+transform", (Integer p) -> decode(t, order[p]), threads, Order.INPUT)
        .sizedBy(ImageItem::bytes)
        .aggregate("batch", batchSize, Remainder.KEEP)
        .sizedBy(items -> items.size() * bytes)
        .queueBytes(2L * batchSize * bytes)
        .failureBudget(FailureBudget.count(Long.MAX_VALUE))
        .build().start();
  }

  private ImageItem decode(ImageTransform t, int index) throws Exception {
    byte[] data = samples.get(index).read();
    ArrowBuf buf = allocator.buffer(t.outputBytes());
    try {
      t.apply(data, 0, data.length, index, buf, 0);
      return new ImageItem(buf);
    } catch (Exception e) {
      buf.close();
      throw e;
    }
  }

  @Override
  public ArrowBuf next() {
    if (!running.hasNext()) {
      return null;
    }
    List<ImageItem> items = running.next();
    long bytes = transform.outputBytes();
    try {
      for (int i = 0; i < items.size(); i++) {
        batch.setBytes(i * bytes, items.get(i).buf, 0, bytes);
      }
    } finally {
      items.forEach(ImageItem::close);
    }
    lastSize = items.size();
    return batch;
  }

  @Override
  public int lastSize() {
    return lastSize;
  }

  @Override
  public void release() {
    // the batch buffer is reused by the next call to next()
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
    stopRunning();
    pools.close();
    batch.close();
  }

  private static int[] shuffled(int n, SplittableRandom rng) {
    int[] order = IntStream.range(0, n).toArray();
    for (int i = n - 1; i > 0; i--) {
      int j = rng.nextInt(i + 1);
      int v = order[i];
      order[i] = order[j];
      order[j] = v;
    }
    return order;
  }

  /** One transformed image in its own Arrow buffer; closing it twice is harmless. */
  static final class ImageItem implements AutoCloseable {
    private final ArrowBuf buf;
    private boolean closed;

    ImageItem(ArrowBuf buf) {
      this.buf = buf;
    }

    long bytes() {
      return buf.capacity();
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        buf.close();
      }
    }
  }
}
