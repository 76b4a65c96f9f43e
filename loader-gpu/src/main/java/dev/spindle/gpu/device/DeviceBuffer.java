package dev.spindle.gpu.device;

import java.util.Optional;

/**
 * A slab of device memory (off-heap host memory on the host device).
 *
 * <p>{@link #address()} is the raw device pointer ({@code CUdeviceptr} value) a CUDA trainer can
 * use; on the host device it is a native host address. Owner: whoever allocated it; {@link
 * #close()} is idempotent.
 */
public interface DeviceBuffer extends AutoCloseable {
  /** Device pointer (or host address on the host device) of byte 0. */
  long address();

  /** Size in bytes. */
  long size();

  /**
   * Exports the allocation holding this buffer for another process on the node (CUDA IPC), if the
   * device can: empty on the host devices (a {@link SharedMemoryDevice} shares its slabs as files
   * instead). Makes the device's context current on the calling thread; any thread, while the
   * buffer is open.
   *
   * @throws IllegalStateException if the buffer is closed
   */
  default Optional<IpcExport> exportIpc() {
    return Optional.empty();
  }

  @Override
  void close();
}
