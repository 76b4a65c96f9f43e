package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.PinnedPool;
import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.ReferenceManager;

/**
 * Arrow memory carved from a feeder's {@link PinnedPool}: buffers a producer allocates through
 * {@link GpuFeeder#newPinnedAllocator} already live in pinned memory, so the feeder can hand them
 * to the copy engine in place. Freed back to the pool when Arrow's reference count reaches zero, on
 * whichever thread releases last (the producer, or the feeder's copy thread).
 */
final class PinnedAllocationManager extends AllocationManager {
  private final PinnedPool pool;
  private final long address;
  private final long size;

  private PinnedAllocationManager(BufferAllocator accounting, PinnedPool pool, long size) {
    super(accounting);
    this.pool = pool;
    this.size = size;
    try {
      this.address = pool.allocate(size);
    } catch (IllegalStateException e) {
      throw new OutOfMemoryException(e.getMessage());
    }
  }

  /** A factory for {@code BaseAllocator.configBuilder().allocationManagerFactory(...)}. */
  static AllocationManager.Factory factory(PinnedPool pool) {
    ArrowBuf empty = new ArrowBuf(ReferenceManager.NO_OP, null, 0, 0);
    return new AllocationManager.Factory() {
      @Override
      public AllocationManager create(BufferAllocator accounting, long size) {
        return new PinnedAllocationManager(accounting, pool, size);
      }

      @Override
      public ArrowBuf empty() {
        return empty;
      }
    };
  }

  @Override
  public long getSize() {
    return size;
  }

  @Override
  protected long memoryAddress() {
    return address;
  }

  @Override
  protected void release0() {
    pool.free(address);
  }
}
