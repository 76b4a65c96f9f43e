package dev.spindle.gpu.cuda;

import static dev.spindle.gpu.cuda.Cuda.check;

import dev.spindle.gpu.device.DeviceBuffer;
import dev.spindle.gpu.device.IpcExport;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * A device slab from {@code cuMemAlloc} (so it can be exported for CUDA IPC); freed with {@code
 * cuMemFree}.
 */
final class CudaDeviceBuffer implements DeviceBuffer {
  private final CudaDevice device;
  private final CUdeviceptr pointer;
  private final long address;
  private final long size;
  private final AtomicBoolean closed = new AtomicBoolean();

  private CudaDeviceBuffer(CudaDevice device, CUdeviceptr pointer, long address, long size) {
    this.device = device;
    this.pointer = pointer;
    this.address = address;
    this.size = size;
  }

  /** Caller has made the context current. */
  static CudaDeviceBuffer allocate(CudaDevice device, long bytes) {
    CUdeviceptr p = new CUdeviceptr();
    check(JCudaDriver.cuMemAlloc(p, bytes), "cuMemAlloc(" + bytes + ")");
    try {
      return new CudaDeviceBuffer(device, p, CudaDevice.addressOf(p), bytes);
    } catch (RuntimeException | Error e) {
      JCudaDriver.cuMemFree(p);
      throw e;
    }
  }

  static CudaDeviceBuffer of(DeviceBuffer b, CudaDevice device) {
    if (b instanceof CudaDeviceBuffer d && d.device == device) {
      return d;
    }
    throw new IllegalArgumentException("Device buffer " + b + " is not memory of " + device);
  }

  CUdeviceptr pointer(long offset) {
    if (closed.get()) {
      throw new IllegalStateException("Device buffer of " + size + " bytes is closed");
    }
    return pointer.withByteOffset(offset);
  }

  @Override
  public long address() {
    return address;
  }

  @Override
  public long size() {
    return size;
  }

  /** The slab's allocation as a CUDA IPC handle; pointers into it become offsets from its base. */
  @Override
  public Optional<IpcExport> exportIpc() {
    if (closed.get()) {
      throw new IllegalStateException("Device buffer of " + size + " bytes is closed");
    }
    device.makeCurrent();
    return Optional.of(CudaIpc.export(device.ordinal(), pointer, address));
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      device.makeCurrent();
      check(JCudaDriver.cuMemFree(pointer), "cuMemFree(" + size + ")");
    }
  }
}
