package dev.spindle.gpu.cuda;

import static dev.spindle.gpu.cuda.Cuda.check;

import dev.spindle.gpu.device.CopyStream;
import dev.spindle.gpu.device.Device;
import dev.spindle.gpu.device.DeviceBuffer;
import dev.spindle.gpu.device.DeviceKind;
import dev.spindle.gpu.device.HostBuffer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * One CUDA GPU through the JCuda driver API: retains the device's primary context (shared with any
 * other CUDA user in the process, e.g. a JVM trainer), allocates pinned host slabs with {@code
 * cuMemHostAlloc} and device slabs with {@code cuMemAlloc}, and opens non-blocking streams.
 *
 * <p>Threads: any; every call makes the primary context current on the calling thread first. Owner:
 * the caller; buffers and streams must be closed before {@link #close()}, which releases the
 * primary context once (idempotent).
 */
final class CudaDevice implements Device {
  private final int ordinal;
  private final CUdevice device = new CUdevice();
  private final CUcontext context = new CUcontext();
  private final String description;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Opens device {@code ordinal} and retains its primary context. */
  public CudaDevice(int ordinal) {
    if (ordinal < 0) {
      throw new IllegalArgumentException("Invalid CUDA ordinal: " + ordinal + " (must be >= 0)");
    }
    this.ordinal = ordinal;
    check(JCudaDriver.cuInit(0), "cuInit");
    check(JCudaDriver.cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
    check(JCudaDriver.cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain");
    try {
      makeCurrent();
      this.description = "cuda:" + ordinal + " " + name() + " (driver " + driverVersion() + ")";
    } catch (RuntimeException e) {
      JCudaDriver.cuDevicePrimaryCtxRelease(device);
      throw e;
    }
  }

  @Override
  public DeviceKind kind() {
    return DeviceKind.CUDA;
  }

  @Override
  public int ordinal() {
    return ordinal;
  }

  @Override
  public String description() {
    return description;
  }

  @Override
  public HostBuffer allocateHost(long bytes) {
    if (bytes <= 0 || bytes >= MAX_HOST_SLAB_BYTES) {
      throw new IllegalArgumentException(
          "Invalid pinned slab size: "
              + bytes
              + " bytes (must be > 0 and < "
              + MAX_HOST_SLAB_BYTES
              + ": JCuda wraps it in a ByteBuffer)");
    }
    makeCurrent();
    return PinnedBuffer.allocate(this, bytes);
  }

  @Override
  public DeviceBuffer allocateDevice(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("Invalid device slab size: " + bytes + " (must be > 0)");
    }
    makeCurrent();
    return CudaDeviceBuffer.allocate(this, bytes);
  }

  @Override
  public CopyStream openStream(int events) {
    makeCurrent();
    return new CudaStream(this, events);
  }

  @Override
  public void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst) {
    CudaDeviceBuffer from = CudaDeviceBuffer.of(src, this);
    int n = dst.remaining();
    if (srcOffset < 0 || srcOffset + n > from.size()) {
      throw new IndexOutOfBoundsException(
          "Invalid range: offset "
              + srcOffset
              + ", "
              + n
              + " bytes in a device buffer of "
              + from.size());
    }
    makeCurrent();
    check(
        JCudaDriver.cuMemcpyDtoH(Pointer.to(dst.slice()), from.pointer(srcOffset), n),
        "cuMemcpyDtoH(" + n + ")");
  }

  /** Makes the primary context current on the calling thread. */
  void makeCurrent() {
    if (closed.get()) {
      throw new IllegalStateException("CUDA device " + ordinal + " is closed");
    }
    check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      check(JCudaDriver.cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease");
    }
  }

  @Override
  public String toString() {
    return description;
  }

  private String name() {
    byte[] name = new byte[256];
    check(JCudaDriver.cuDeviceGetName(name, name.length, device), "cuDeviceGetName");
    int len = 0;
    while (len < name.length && name[len] != 0) {
      len++;
    }
    return new String(name, 0, len, StandardCharsets.US_ASCII);
  }

  private static int driverVersion() {
    int[] v = {0};
    check(JCudaDriver.cuDriverGetVersion(v), "cuDriverGetVersion");
    return v[0];
  }

  /** Raw value of a device pointer, for trainers that do their own CUDA calls. */
  static long addressOf(CUdeviceptr ptr) {
    long[] value = {0};
    check(
        JCudaDriver.cuPointerGetAttribute(
            Pointer.to(value),
            jcuda.driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
            ptr),
        "cuPointerGetAttribute(DEVICE_POINTER)");
    return value[0];
  }
}
