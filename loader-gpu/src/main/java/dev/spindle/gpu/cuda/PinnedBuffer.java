package dev.spindle.gpu.cuda;

import static dev.spindle.gpu.cuda.Cuda.check;

import dev.spindle.gpu.device.HostBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;
import org.apache.arrow.memory.util.MemoryUtil;

/** A page-locked host slab from {@code cuMemHostAlloc}; freed with {@code cuMemFreeHost}. */
final class PinnedBuffer implements HostBuffer {
  private final CudaDevice device;
  private final Pointer pointer;
  private final long address;
  private final long size;
  private final AtomicBoolean closed = new AtomicBoolean();

  private PinnedBuffer(CudaDevice device, Pointer pointer, long address, long size) {
    this.device = device;
    this.pointer = pointer;
    this.address = address;
    this.size = size;
  }

  /** Caller has made the context current and checked {@code bytes} < 2 GiB. */
  static PinnedBuffer allocate(CudaDevice device, long bytes) {
    Pointer p = new Pointer();
    check(
        JCudaDriver.cuMemHostAlloc(p, bytes, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE),
        "cuMemHostAlloc(" + bytes + ")");
    try {
      long address = MemoryUtil.getByteBufferAddress(p.getByteBuffer(0, bytes));
      return new PinnedBuffer(device, p, address, bytes);
    } catch (RuntimeException | Error e) {
      JCudaDriver.cuMemFreeHost(p);
      throw e;
    }
  }

  static PinnedBuffer of(HostBuffer b, CudaDevice device) {
    if (b instanceof PinnedBuffer p && p.device == device) {
      return p;
    }
    throw new IllegalArgumentException("Host buffer " + b + " is not pinned memory of " + device);
  }

  Pointer pointer(long offset) {
    checkOpen();
    return pointer.withByteOffset(offset);
  }

  @Override
  public long address() {
    checkOpen();
    return address;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      device.makeCurrent();
      check(JCudaDriver.cuMemFreeHost(pointer), "cuMemFreeHost(" + size + ")");
    }
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("Pinned buffer of " + size + " bytes is closed");
    }
  }
}
