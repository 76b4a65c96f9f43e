package dev.spindle.spark.image;

import dev.spindle.spark.plan.SplitMix64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A plain thread-pool batch loader for the image benchmark (the engine-free baseline of {@link
 * EngineLoader}): shuffles an epoch, decodes and transforms samples on {@code threads} pool threads
 * straight into a ring of reusable Arrow batch buffers, and hands complete batches to one consumer
 * thread in order.
 *
 * <p>Workers claim sample positions in epoch order, so all threads fill the oldest batch first (a
 * short time to first batch); a worker that reaches a batch beyond the ring waits until the
 * consumer releases one (back-pressure, bounded memory). The consumer calls {@link #next} and
 * {@link #release} from one thread. Owns its pool and ring buffers; {@link #close} frees both.
 */
final class BatchLoader implements BenchLoader {
  private final List<BenchInput.Sample> samples;
  private final ImageTransform transform;
  private final int batchSize;
  private final ArrowBuf[] ring;
  private final AtomicInteger[] filled;
  private final ExecutorService pool;
  private final int threads;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final AtomicLong quarantined = new AtomicLong();
  private volatile int[] order;
  private volatile ImageTransform epochTransform;
  private volatile AtomicInteger cursor;
  private volatile int released;
  private int nextBatch;

  BatchLoader(
      List<BenchInput.Sample> samples,
      ImageTransform transform,
      int threads,
      int batchSize,
      int ringSize,
      BufferAllocator allocator) {
    this.samples = samples;
    this.transform = transform;
    this.batchSize = batchSize;
    this.threads = threads;
    this.ring = new ArrowBuf[ringSize];
    this.filled = new AtomicInteger[ringSize];
    try {
      for (int i = 0; i < ringSize; i++) {
        ring[i] = allocator.buffer(batchSize * transform.outputBytes());
        filled[i] = new AtomicInteger();
      }
    } catch (RuntimeException e) {
      closeBuffers();
      throw e;
    }
    AtomicInteger n = new AtomicInteger();
    this.pool =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "spindle-image-" + n.getAndIncrement());
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public void startEpoch(long seed, long epoch) {
    order = shuffled(samples.size(), SampleRandom.of(seed, epoch, -1));
    epochTransform = transform.withSeed(seed).forEpoch(epoch);
    cursor = new AtomicInteger();
    released = 0;
    nextBatch = 0;
    for (AtomicInteger f : filled) {
      f.set(0);
    }
    for (int t = 0; t < threads; t++) {
      pool.execute(this::work);
    }
  }

  int batches() {
    return (samples.size() + batchSize - 1) / batchSize;
  }

  @Override
  public ArrowBuf next() throws InterruptedException {
    if (nextBatch >= batches()) {
      return null;
    }
    int slot = nextBatch % ring.length;
    int size = sizeOf(nextBatch);
    lock.lock();
    try {
      while (filled[slot].get() < size) {
        rethrow();
        changed.await(100, TimeUnit.MILLISECONDS);
      }
    } finally {
      lock.unlock();
    }
    rethrow();
    nextBatch++;
    return ring[slot];
  }

  /** Images in batch {@code b} of the epoch (the last one may be partial). */
  int sizeOf(int b) {
    return Math.min(batchSize, samples.size() - b * batchSize);
  }

  @Override
  public int lastSize() {
    return sizeOf(nextBatch - 1);
  }

  @Override
  public void release() {
    filled[(nextBatch - 1) % ring.length].set(0);
    lock.lock();
    try {
      released = nextBatch;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public long quarantined() {
    return quarantined.get();
  }

  private void work() {
    try {
      for (int pos = cursor.getAndIncrement(); pos < order.length; pos = cursor.getAndIncrement()) {
        int batch = pos / batchSize;
        awaitRoom(batch);
        fill(pos, ring[batch % ring.length], (long) (pos % batchSize) * transform.outputBytes());
        if (filled[batch % ring.length].incrementAndGet() == sizeOf(batch)) {
          signal();
        }
      }
    } catch (Throwable t) {
      failure.compareAndSet(null, t);
      signal();
    }
  }

  private void fill(int pos, ArrowBuf buf, long offset) throws Exception {
    BenchInput.Sample s = samples.get(order[pos]);
    byte[] data = s.read();
    try {
      epochTransform.apply(data, 0, data.length, order[pos], buf, offset);
    } catch (ImageException e) {
      quarantined.incrementAndGet();
      buf.setZero(offset, transform.outputBytes());
    }
  }

  private void awaitRoom(int batch) throws InterruptedException {
    if (batch < released + ring.length) {
      return;
    }
    lock.lock();
    try {
      while (batch >= released + ring.length) {
        changed.await(100, TimeUnit.MILLISECONDS);
      }
    } finally {
      lock.unlock();
    }
  }

  private void signal() {
    lock.lock();
    try {
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void rethrow() {
    Throwable t = failure.get();
    if (t != null) {
      throw new IllegalStateException("Image worker failed: " + t, t);
    }
  }

  private static int[] shuffled(int n, SplitMix64 rng) {
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    rng.shuffle(order);
    return order;
  }

  ExecutorService pool() {
    return pool;
  }

  @Override
  public void close() {
    pool.shutdownNow();
    try {
      pool.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closeBuffers();
  }

  private void closeBuffers() {
    for (int i = 0; i < ring.length; i++) {
      if (ring[i] != null) {
        ring[i].close();
        ring[i] = null;
      }
    }
  }
}
