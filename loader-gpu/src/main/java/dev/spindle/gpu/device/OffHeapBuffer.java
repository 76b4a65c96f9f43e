package dev.spindle.gpu.device;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.util.MemoryUtil;

/** Plain off-heap memory, freed explicitly: the host device's host and device slabs. */
final class OffHeapBuffer implements HostBuffer, DeviceBuffer {
  private final long address;
  private final long size;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong outstanding;

  /** Allocates {@code size} bytes and adds them to {@code outstanding} until closed. */
  OffHeapBuffer(long size, AtomicLong outstanding) {
    if (size <= 0) {
      throw new IllegalArgumentException("Invalid buffer size: " + size + " (must be > 0)");
    }
    this.address = MemoryUtil.allocateMemory(size);
    this.size = size;
    this.outstanding = outstanding;
    outstanding.addAndGet(size);
  }

  @Override
  public long address() {
    if (closed.get()) {
      throw new IllegalStateException("Buffer of " + size + " bytes is closed");
    }
    return address;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      MemoryUtil.freeMemory(address);
      outstanding.addAndGet(-size);
    }
  }
}
