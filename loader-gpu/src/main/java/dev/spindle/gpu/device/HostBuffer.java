package dev.spindle.gpu.device;

/**
 * A slab of host memory the copy engine reads (pinned on CUDA). Writers use {@link #address()} with
 * Arrow's {@code MemoryUtil}; the slab is never resized or moved.
 *
 * <p>Threads: any thread may write disjoint ranges; visibility to the copy thread comes from the
 * ring's hand-off. Owner: whoever allocated it; {@link #close()} is idempotent.
 */
public interface HostBuffer extends AutoCloseable {
  /** Native address of byte 0. */
  long address();

  /** Size in bytes. */
  long size();

  @Override
  void close();
}
