package dev.spindle.gpu.device;

import java.util.Arrays;

/**
 * A device allocation exported for CUDA inter-process sharing: the 64-byte {@code
 * cudaIpcMemHandle_t} another process on the node opens ({@code cuIpcOpenMemHandle}) to map the
 * same device memory, and the allocation it names. The handle always covers the whole allocation
 * (from {@code cuMemAlloc}), so a pointer into it is sent as an offset from {@link #base()}.
 *
 * <p>Immutable value; any thread. The exporting process still owns the memory: the handle is valid
 * only while the buffer it came from is open.
 *
 * @param ordinal CUDA ordinal of the device holding the allocation, in the exporter's numbering
 * @param handle the 64 handle bytes (copied in and out)
 * @param base device pointer of the allocation's first byte
 * @param size bytes in the allocation
 */
public record IpcExport(int ordinal, byte[] handle, long base, long size) {
  /** Size of {@code cudaIpcMemHandle_t}. */
  public static final int HANDLE_BYTES = 64;

  /** Validates and copies the handle. */
  public IpcExport {
    if (handle.length != HANDLE_BYTES) {
      throw new IllegalArgumentException(
          "Invalid CUDA IPC handle: " + handle.length + " bytes (must be " + HANDLE_BYTES + ")");
    }
    if (ordinal < 0 || size <= 0) {
      throw new IllegalArgumentException(
          "Invalid CUDA IPC export: ordinal "
              + ordinal
              + ", size "
              + size
              + " (must be >= 0 and > 0)");
    }
    handle = handle.clone();
  }

  /** A copy of the handle bytes. */
  @Override
  public byte[] handle() {
    return handle.clone();
  }

  /**
   * Offset of {@code bytes} bytes at device pointer {@code pointer} from {@link #base()}.
   *
   * @throws IllegalArgumentException if the range is not inside the allocation
   */
  public long offsetOf(long pointer, long bytes) {
    long offset = pointer - base;
    if (offset < 0 || bytes < 0 || offset + bytes > size) {
      throw new IllegalArgumentException(
          "Invalid pointer 0x"
              + Long.toHexString(pointer)
              + " ("
              + bytes
              + " bytes): outside the exported allocation at 0x"
              + Long.toHexString(base)
              + " of "
              + size
              + " bytes");
    }
    return offset;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IpcExport e
        && e.ordinal == ordinal
        && e.base == base
        && e.size == size
        && Arrays.equals(e.handle, handle);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(handle) + Long.hashCode(base);
  }

  @Override
  public String toString() {
    return "IpcExport[cuda:"
        + ordinal
        + ", base 0x"
        + Long.toHexString(base)
        + ", "
        + size
        + " bytes]";
  }
}
