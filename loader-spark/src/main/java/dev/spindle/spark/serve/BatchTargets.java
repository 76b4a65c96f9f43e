package dev.spindle.spark.serve;

import dev.spindle.gpu.feed.SlotWriter;
import dev.spindle.spark.batch.FieldSpec;
import dev.spindle.spark.batch.ImageBatch;
import dev.spindle.spark.samples.BatchImages;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A feed task's batches to decode into, one per planned batch, claimed in plan order on the source
 * thread as it reaches each batch's first row: a ring slot of the rank's feeder when the consumer
 * has one ({@link BatchConsumer#claimSlot}; waiting while the ring is full, so a slow trainer holds
 * back the readers), else one of {@link #POOLED} Arrow batches from the task's allocator (waiting
 * while all are in use). {@link #close} gives up every batch not yet given up (abandoning its slot
 * or returning its Arrow batch) and frees the pool. Thread-safe (source thread, task thread).
 */
final class BatchTargets implements AutoCloseable {
  /**
   * Arrow batches a task holds at most: one being consumed, one being decoded, one being read
   * ahead.
   */
  static final int POOLED = 3;

  private final BatchConsumer consumer;
  private final BufferAllocator allocator;
  private final BatchImages images;
  private final int batchSize;
  private final List<FieldSpec> extras;
  private final ArrayDeque<ImageBatch> free = new ArrayDeque<>();
  private final List<ImageBatch> all = new ArrayList<>();
  private final List<BatchTarget> open = new ArrayList<>();
  private boolean closed;

  /**
   * @param images the batches' images, or null for samples without an image: the pooled Arrow
   *     batches then have no image column ({@link ImageBatch#withoutImages})
   * @param extras the job's extra fields: the pooled Arrow batches carry a vector for each after
   *     {@code image}, {@code label}, {@code key}, {@code index}
   */
  BatchTargets(
      BatchConsumer consumer,
      BufferAllocator allocator,
      BatchImages images,
      int batchSize,
      List<FieldSpec> extras) {
    this.consumer = consumer;
    this.extras = List.copyOf(extras);
    this.allocator = allocator;
    this.images = images;
    this.batchSize = batchSize;
  }

  /** The batch that rank {@code rank}'s next planned batch is decoded into (source thread). */
  BatchTarget claim(int rank) throws InterruptedException {
    SlotWriter w = consumer.claimSlot(rank);
    BatchTarget t = w == null ? new BatchTarget.Arrow(takeArrow(), this::giveBack) : slot(w);
    boolean late;
    synchronized (this) {
      late = closed;
      if (!late) {
        open.add(t);
      }
    }
    if (late) {
      t.giveUp(); // outside this lock: giving up may take it again (BatchTarget, then this)
      throw new IllegalStateException("The task's batches were closed");
    }
    return t;
  }

  /** The task thread is done with {@code t}. */
  void done(BatchTarget t) {
    synchronized (this) {
      open.remove(t);
    }
    t.giveUp();
  }

  private BatchTarget slot(SlotWriter w) {
    if (images == null || w.rowBytes() != images.rowBytes() || w.capacity() < batchSize) {
      w.close();
      throw new IllegalStateException(
          "The feeder's slots hold "
              + w.capacity()
              + " rows of "
              + w.rowBytes()
              + " bytes; the feed's batches are "
              + batchSize
              + " rows of "
              + (images == null ? "[] (no image) = 0" : images.shape() + " = " + images.rowBytes())
              + " bytes");
    }
    return new BatchTarget.Slot(w);
  }

  private synchronized ImageBatch takeArrow() throws InterruptedException {
    while (free.isEmpty() && all.size() == POOLED && !closed) {
      wait();
    }
    if (closed) {
      throw new IllegalStateException("The task's batches were closed");
    }
    if (!free.isEmpty()) {
      return free.pop();
    }
    ImageBatch b =
        images == null
            ? ImageBatch.withoutImages(allocator, batchSize, extras)
            : new ImageBatch(
                allocator, images.height(), images.width(), images.channels(), batchSize, extras);
    all.add(b);
    return b;
  }

  private synchronized void giveBack(ImageBatch b) {
    if (closed) {
      b.close(); // a batch a late decode write held past close
    } else {
      free.push(b);
      notifyAll();
    }
  }

  /** Gives up every batch still open, then frees the pooled Arrow batches; idempotent. */
  @Override
  public void close() {
    List<BatchTarget> left;
    synchronized (this) {
      if (closed) {
        return;
      }
      left = List.copyOf(open);
      open.clear();
    }
    left.forEach(BatchTarget::giveUp); // back to the pool, or abandoned
    synchronized (this) {
      closed = true;
      free.forEach(ImageBatch::close);
      free.clear();
      notifyAll();
    }
  }
}
