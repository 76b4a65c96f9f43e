package dev.spindle.gpu.device;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The host standing in for a GPU: host and "device" slabs are plain off-heap memory, copies are
 * {@code memcpy} and normalisation runs on the CPU ({@link HostNormalizer}). Work executes when it
 * is enqueued, so every event is complete as soon as it is recorded; the ring's protocol is the
 * same as on CUDA.
 *
 * <p>Threads: any thread, as {@link Device} states. Owner: the caller; {@link #close()} is
 * idempotent and frees nothing the caller still owns.
 */
public final class HostDevice implements Device {
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong outstanding = new AtomicLong();

  /** Creates the host device. Holds no resources of its own. */
  public HostDevice() {}

  @Override
  public DeviceKind kind() {
    return DeviceKind.HOST;
  }

  @Override
  public int ordinal() {
    return -1;
  }

  @Override
  public String description() {
    return "host (" + Runtime.getRuntime().availableProcessors() + " cpus)";
  }

  @Override
  public HostBuffer allocateHost(long bytes) {
    checkOpen();
    if (bytes >= MAX_HOST_SLAB_BYTES) {
      throw new IllegalArgumentException(
          "Invalid host slab size: " + bytes + " bytes (must be < " + MAX_HOST_SLAB_BYTES + ")");
    }
    return new OffHeapBuffer(bytes, outstanding);
  }

  @Override
  public DeviceBuffer allocateDevice(long bytes) {
    checkOpen();
    return new OffHeapBuffer(bytes, outstanding);
  }

  /** Bytes allocated from this device and not yet freed: the leak check for tests. */
  public long outstandingBytes() {
    return outstanding.get();
  }

  @Override
  public CopyStream openStream(int events) {
    checkOpen();
    return new HostCopyStream(events);
  }

  @Override
  public void copyToHost(DeviceBuffer src, long srcOffset, ByteBuffer dst) {
    checkRange(src.size(), srcOffset, dst.remaining());
    long to = MemoryUtil.getByteBufferAddress(dst) + dst.position();
    MemoryUtil.copyMemory(src.address() + srcOffset, to, dst.remaining());
  }

  @Override
  public void close() {
    closed.set(true);
  }

  @Override
  public String toString() {
    return description();
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("Host device is closed");
    }
  }

  static void checkRange(long size, long offset, long bytes) {
    if (offset < 0 || bytes < 0 || offset + bytes > size) {
      throw new IndexOutOfBoundsException(
          "Invalid range: offset " + offset + ", " + bytes + " bytes in a buffer of " + size);
    }
  }

  /** Executes work at once; events only validate their index. */
  private static final class HostCopyStream implements CopyStream {
    private final int events;
    private float[] table = new float[0];
    private int[] lut = new int[0];

    HostCopyStream(int events) {
      if (events <= 0) {
        throw new IllegalArgumentException("Invalid event count: " + events + " (must be > 0)");
      }
      this.events = events;
    }

    @Override
    public void copyToDevice(
        HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes) {
      checkRange(src.size(), srcOffset, bytes);
      checkRange(dst.size(), dstOffset, bytes);
      MemoryUtil.copyMemory(src.address() + srcOffset, dst.address() + dstOffset, bytes);
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
      checkRange(src.size(), srcOffset, (long) rows * spec.inputBytesPerImage());
      checkRange(dst.size(), dstOffset, rows * spec.outputBytesPerImage());
      if (this.table.length != 2 * spec.channels()) {
        this.table = new float[2 * spec.channels()];
        this.lut = new int[256 * spec.channels()];
      }
      for (int i = 0; i < this.table.length; i++) {
        this.table[i] =
            Float.intBitsToFloat(MemoryUtil.getInt(table.address() + tableOffset + 4L * i));
      }
      HostNormalizer.normalize(
          src.address() + srcOffset, dst.address() + dstOffset, rows, spec, this.table, lut);
    }

    @Override
    public void record(int event) {
      Objects.checkIndex(event, events);
    }

    @Override
    public boolean isComplete(int event) {
      Objects.checkIndex(event, events);
      return true;
    }

    @Override
    public void synchronize() {}

    @Override
    public void close() {}
  }
}
