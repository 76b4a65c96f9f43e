package dev.spindle.gpu.cuda;

import static dev.spindle.gpu.cuda.Cuda.check;

import dev.spindle.gpu.device.CopyStream;
import dev.spindle.gpu.device.DeviceBuffer;
import dev.spindle.gpu.device.HostBuffer;
import dev.spindle.gpu.device.NormalizeSpec;
import java.util.Objects;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * A non-blocking CUDA stream with one reusable event per ring slot, and the normalisation kernels.
 * Confined to the thread that opened it (the copy thread, which keeps the primary context current).
 * The constructor rolls back what it created if a later step fails; {@link #close()} synchronises,
 * then destroys events, kernels and stream (idempotent).
 */
final class CudaStream implements CopyStream {
  private static final int THREADS = 256;
  private static final int MAX_BLOCKS = 65535;
  private final CudaDevice device;
  private final CUstream stream = new CUstream();
  private final CUevent[] events;
  private NormalizeKernels kernels;
  private int createdEvents;
  private boolean streamCreated;
  private boolean closed;

  CudaStream(CudaDevice device, int events) {
    if (events <= 0) {
      throw new IllegalArgumentException("Invalid event count: " + events + " (must be > 0)");
    }
    this.device = device;
    this.events = new CUevent[events];
    try {
      check(
          JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING),
          "cuStreamCreate");
      streamCreated = true;
      for (int i = 0; i < events; i++) {
        CUevent e = new CUevent();
        check(JCudaDriver.cuEventCreate(e, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        this.events[createdEvents++] = e;
      }
      kernels = new NormalizeKernels();
    } catch (RuntimeException e) {
      Cuda.closeQuietly(this, e);
      throw e;
    }
  }

  @Override
  public void copyToDevice(
      HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
    PinnedBuffer from = PinnedBuffer.of(src, device);
    CudaDeviceBuffer to = CudaDeviceBuffer.of(dst, device);
    checkRange(from.size(), srcOffset, bytes);
    checkRange(to.size(), dstOffset, bytes);
    check(
        JCudaDriver.cuMemcpyHtoDAsync(
            to.pointer(dstOffset), from.pointer(srcOffset), bytes, stream),
        "cuMemcpyHtoDAsync(" + bytes + ")");
  }

  @Override
  public void normalize(
      DeviceBuffer src,
      long srcOffset,
      DeviceBuffer dst,
      long dstOffset,
      DeviceBuffer table,
      long tableOffset,
      int rows,
      NormalizeSpec spec) {
    CudaDeviceBuffer in = CudaDeviceBuffer.of(src, device);
    CudaDeviceBuffer out = CudaDeviceBuffer.of(dst, device);
    CudaDeviceBuffer tab = CudaDeviceBuffer.of(table, device);
    checkRange(in.size(), srcOffset, (long) rows * spec.inputBytesPerImage());
    checkRange(out.size(), dstOffset, rows * spec.outputBytesPerImage());
    checkRange(tab.size(), tableOffset, 8L * spec.channels());
    long total = (long) rows * spec.pixels();
    int blocks = (int) Math.max(1, Math.min(MAX_BLOCKS, (total + THREADS - 1) / THREADS));
    // Kernel parameters are copied at launch, so short-lived Pointer.to(array) is safe here.
    Pointer params =
        Pointer.to(
            Pointer.to(in.pointer(srcOffset)),
            Pointer.to(out.pointer(dstOffset)),
            Pointer.to(tab.pointer(tableOffset)),
            Pointer.to(new int[] {rows}),
            Pointer.to(new int[] {spec.pixels()}),
            Pointer.to(new int[] {spec.channels()}));
    check(
        JCudaDriver.cuLaunchKernel(
            kernels.function(spec.type()), blocks, 1, 1, THREADS, 1, 1, 0, stream, params, null),
        "cuLaunchKernel(normalize " + spec.type() + ", " + rows + ")");
  }

  @Override
  public void record(int event) {
    check(
        JCudaDriver.cuEventRecord(events[Objects.checkIndex(event, events.length)], stream),
        "cuEventRecord(" + event + ")");
  }

  @Override
  public boolean isComplete(int event) {
    int rc = JCudaDriver.cuEventQuery(events[Objects.checkIndex(event, events.length)]);
    if (rc == CUresult.CUDA_ERROR_NOT_READY) {
      return false;
    }
    check(rc, "cuEventQuery(" + event + ")");
    return true;
  }

  @Override
  public void synchronize() {
    check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }

  /** Waits for outstanding work, then destroys kernels, events and stream; every step runs. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    device.makeCurrent();
    RuntimeException first = null;
    if (streamCreated) {
      first =
          step(first, () -> check(JCudaDriver.cuStreamSynchronize(stream), "cuStreamSynchronize"));
    }
    if (kernels != null) {
      first = step(first, kernels::close);
    }
    for (int i = createdEvents - 1; i >= 0; i--) {
      CUevent e = events[i];
      int index = i;
      first =
          step(first, () -> check(JCudaDriver.cuEventDestroy(e), "cuEventDestroy(" + index + ")"));
    }
    if (streamCreated) {
      first = step(first, () -> check(JCudaDriver.cuStreamDestroy(stream), "cuStreamDestroy"));
    }
    if (first != null) {
      throw first;
    }
  }

  private static RuntimeException step(RuntimeException first, Runnable r) {
    try {
      r.run();
      return first;
    } catch (RuntimeException e) {
      if (first == null) {
        return e;
      }
      first.addSuppressed(e);
      return first;
    }
  }

  private static void checkRange(long size, long offset, long bytes) {
    if (offset < 0 || bytes < 0 || offset + bytes > size) {
      throw new IndexOutOfBoundsException(
          "Invalid range: offset " + offset + ", " + bytes + " bytes in a buffer of " + size);
    }
  }
}
