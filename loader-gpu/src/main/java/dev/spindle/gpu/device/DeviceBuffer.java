package dev.spindle.gpu.device;

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

  @Override
  void close();
}
