package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.DeviceKind;
import dev.spindle.gpu.device.ElementType;
import dev.spindle.gpu.device.NormalizeSpec;
import dev.spindle.gpu.ring.Lease;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A batch leased from a {@link GpuFeeder}: the image tensor and int64 labels in device memory, plus
 * keys and plan indices on the host. Use it in try-with-resources; closing releases the ring slot,
 * which may then be refilled.
 *
 * <pre>{@code
 * try (DeviceBatch b = feeder.next(Duration.ofSeconds(30))) {
 *   if (b == null) break;               // end of input
 *   train(b.imagePointer(), b.shape(), b.dtype(), b.labelsPointer());
 * }
 * }</pre>
 *
 * <p>Memory is owned by the feeder and valid only while the lease is: every accessor throws {@link
 * IllegalStateException} once the batch was closed, its lease expired, or the feeder revoked it at
 * close. Device work that reads the batch must be complete before {@link #close()}. Threads: one
 * consumer at a time; {@link #close()} is idempotent and safe from any thread.
 */
public final class DeviceBatch implements AutoCloseable {
  private final GpuFeeder feeder;
  private final Lease<SlotMemory> lease;
  private final SlotMemory m;
  private final NormalizeSpec spec;
  private final int rows;
  private final AtomicBoolean closed = new AtomicBoolean();

  DeviceBatch(GpuFeeder feeder, Lease<SlotMemory> lease) {
    this.feeder = feeder;
    this.lease = lease;
    this.m = lease.slot().payload();
    this.spec = feeder.config().normalize();
    this.rows = m.rows;
  }

  /** Publication order of this batch in its feeder, from 0. */
  public long sequence() {
    return lease.sequence();
  }

  /** Number of images. */
  public int rows() {
    return rows;
  }

  /** Element type of the image tensor. */
  public ElementType dtype() {
    return spec.type();
  }

  /** {@code [rows, H, W, C]} for uint8, {@code [rows, C, H, W]} for normalised output. */
  public long[] shape() {
    return spec.type() == ElementType.UINT8
        ? new long[] {rows, spec.height(), spec.width(), spec.channels()}
        : new long[] {rows, spec.channels(), spec.height(), spec.width()};
  }

  /** Device pointer of the image tensor (a host address on the host device). */
  public long imagePointer() {
    checkValid();
    return feeder.deviceBase() + m.deviceOutput;
  }

  /** Size of the image tensor in bytes. */
  public long imageBytes() {
    return rows
        * (spec.type() == ElementType.UINT8
            ? spec.inputBytesPerImage()
            : spec.outputBytesPerImage());
  }

  /** Device pointer of {@link #rows()} int64 labels. */
  public long labelsPointer() {
    checkValid();
    return feeder.deviceBase() + m.deviceLabels;
  }

  /** Label of {@code row}. */
  public long label(int row) {
    return checked(m.labels[Objects.checkIndex(row, rows)]);
  }

  /** Plan index (position in the epoch plan) of {@code row}. */
  public long index(int row) {
    return checked(m.indices[Objects.checkIndex(row, rows)]);
  }

  /** Loss weight of {@code row}: 1 for a real sample, 0 for padding and stand-ins. */
  public float weight(int row) {
    float w = m.weights[Objects.checkIndex(row, rows)];
    checkValid();
    return w;
  }

  /** Sample key of {@code row}. */
  public String key(int row) {
    String k = m.key(Objects.checkIndex(row, rows));
    checkValid();
    return k;
  }

  /** Which kind of device holds the batch. */
  public DeviceKind deviceKind() {
    return feeder.device().kind();
  }

  /** CUDA ordinal of the device, or -1 on the host device. */
  public int deviceOrdinal() {
    return feeder.device().ordinal();
  }

  /** {@link System#nanoTime()} by which the batch must be closed. */
  public long deadlineNanos() {
    return lease.deadlineNanos();
  }

  /** True while the lease is held and valid. */
  public boolean isValid() {
    return !closed.get() && lease.isCurrent();
  }

  /**
   * Copies the image tensor from device memory into {@code dst} (direct, at least {@link
   * #imageBytes()} remaining), synchronously. For verification, not the training path.
   */
  public void copyImageTo(ByteBuffer dst) {
    checkValid();
    ByteBuffer view = dst.slice().limit((int) imageBytes());
    feeder.device().copyToHost(feeder.deviceSlab(), m.deviceOutput, view);
  }

  /** Copies the {@link #rows()} int64 labels from device memory into {@code dst}, synchronously. */
  public void copyLabelsTo(ByteBuffer dst) {
    checkValid();
    ByteBuffer view = dst.slice().limit(8 * rows);
    feeder.device().copyToHost(feeder.deviceSlab(), m.deviceLabels, view);
  }

  /** Releases the lease; the slot returns to the ring. Idempotent; harmless after feeder close. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      feeder.release(lease);
    }
  }

  @Override
  public String toString() {
    return "DeviceBatch[#"
        + sequence()
        + " rows="
        + rows
        + " "
        + spec.type()
        + " on "
        + feeder.device().description()
        + (isValid() ? "" : " (released)")
        + "]";
  }

  private long checked(long value) {
    checkValid();
    return value;
  }

  private void checkValid() {
    if (closed.get()) {
      throw new IllegalStateException("Batch #" + sequence() + " was closed");
    }
    if (!lease.isCurrent()) {
      throw new IllegalStateException(
          "Batch #"
              + sequence()
              + " is no longer leased (lease "
              + "expired or revoked when the feeder closed)");
    }
  }
}
