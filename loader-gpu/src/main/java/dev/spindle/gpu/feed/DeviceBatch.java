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
  private final boolean images;
  private final int rows;
  private final AtomicBoolean closed = new AtomicBoolean();

  DeviceBatch(GpuFeeder feeder, Lease<SlotMemory> lease) {
    this.feeder = feeder;
    this.lease = lease;
    this.m = lease.slot().payload();
    this.spec = feeder.config().normalize();
    this.images = feeder.config().images();
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
    return images ? spec.type() : ElementType.UINT8;
  }

  /**
   * {@code [rows, H, W, C]} for uint8, {@code [rows, C, H, W]} for normalised output; empty (no
   * dimensions) for a feeder without images.
   */
  public long[] shape() {
    if (!images) {
      return new long[0];
    }
    return spec.type() == ElementType.UINT8
        ? new long[] {rows, spec.height(), spec.width(), spec.channels()}
        : new long[] {rows, spec.channels(), spec.height(), spec.width()};
  }

  /** Device pointer of the image tensor (a host address on the host device). */
  public long imagePointer() {
    checkValid();
    return feeder.deviceBase() + m.deviceOutput;
  }

  /** Size of the image tensor in bytes (0 for a feeder without images). */
  public long imageBytes() {
    if (!images) {
      return 0;
    }
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

  /** The batch's extra fields, in column order (empty for image and label batches). */
  public java.util.List<SlotField> fields() {
    return m.fields.list();
  }

  /**
   * Device pointer (a host address on the host device) of extra field {@code i}'s values: {@link
   * #rows()} elements of a fixed field; a variable field's rows back to back.
   */
  public long fieldValuesPointer(int i) {
    checkValid();
    return feeder.deviceBase() + m.deviceValues(Objects.checkIndex(i, m.fields.count()));
  }

  /** Bytes of extra field {@code i}'s values in this batch. */
  public long fieldValuesBytes(int i) {
    return checked(m.fieldValueBytes[Objects.checkIndex(i, m.fields.count())]);
  }

  /**
   * Device pointer of variable field {@code i}'s {@code rows + 1} int32 offsets (in elements, from
   * 0: row r is elements {@code offsets[r]..offsets[r+1]}).
   *
   * @throws IllegalStateException for a fixed field, which has none
   */
  public long fieldOffsetsPointer(int i) {
    SlotField f = m.fields.field(Objects.checkIndex(i, m.fields.count()));
    if (!f.variable()) {
      throw new IllegalStateException("Field '" + f.name() + "' is fixed-width: no offsets");
    }
    checkValid();
    return feeder.deviceBase() + m.deviceOffsets(i);
  }

  /** Bytes of variable field {@code i}'s offsets: 4 × (rows + 1); 0 for a fixed field. */
  public long fieldOffsetsBytes(int i) {
    SlotField f = m.fields.field(Objects.checkIndex(i, m.fields.count()));
    return checked(f.variable() ? 4L * (rows + 1) : 0);
  }

  /**
   * Copies extra field {@code i}'s values, then (variable fields) its offsets, from device memory
   * into {@code dst}, synchronously. For verification, not the training path.
   */
  public void copyFieldTo(int i, ByteBuffer dst) {
    checkValid();
    int values = (int) fieldValuesBytes(i);
    feeder.device().copyToHost(feeder.deviceSlab(), m.deviceValues(i), dst.slice().limit(values));
    if (m.fields.field(i).variable()) {
      ByteBuffer o = dst.slice().position(values).slice().limit((int) fieldOffsetsBytes(i));
      feeder.device().copyToHost(feeder.deviceSlab(), m.deviceOffsets(i), o);
    }
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
