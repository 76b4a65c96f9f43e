package dev.spindle.gpu.device;

import java.nio.ByteBuffer;

/**
 * One accelerator (or the host standing in for one): allocates the host staging memory the copy
 * engine reads, the device memory trainers read, and opens the stream that moves bytes between
 * them.
 *
 * <p>Threads: {@link #allocateHost}, {@link #allocateDevice}, {@link #copyToHost} and {@link
 * #close} may be called from any thread. A {@link CopyStream} is confined to the thread that opened
 * it (for CUDA, the thread that owns the context and the stream).
 *
 * <p>Ownership: the caller owns every buffer and stream it gets and must close them before closing
 * the device. {@link #close()} is idempotent.
 */
public interface Device extends AutoCloseable {

  /** Largest host slab one call may allocate: JCuda wraps pinned memory in a direct ByteBuffer. */
  long MAX_HOST_SLAB_BYTES = (1L << 31) - (1L << 21);

  /** Which implementation this is. */
  DeviceKind kind();

  /** The CUDA device ordinal, or {@code -1} for the host device. */
  int ordinal();

  /** Human-readable description, e.g. {@code cuda:0 NVIDIA H100 (driver 13000)} or {@code host}. */
  String description();

  /**
   * Allocates host memory the copy engine can read in place: page-locked on CUDA, plain off-heap
   * memory on the host device. Must be below {@link #MAX_HOST_SLAB_BYTES}.
   */
  HostBuffer allocateHost(long bytes);

  /** Allocates device memory (off-heap memory on the host device). */
  DeviceBuffer allocateDevice(long bytes);

  /** Opens a stream bound to the calling thread, with {@code events} reusable completion events. */
  CopyStream openStream(int events);

  /**
   * Copies {@code dst.remaining()} bytes from device memory at {@code src + srcOffset} into {@code
   * dst} (a direct buffer), synchronously. For verification and tests, not the steady path.
   */
  void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst);

  @Override
  void close();
}
