package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.Device;
import dev.spindle.gpu.device.DeviceBuffer;
import dev.spindle.gpu.device.ElementType;
import dev.spindle.gpu.device.HostBuffer;
import dev.spindle.gpu.device.NormalizeSpec;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * All memory of one feeder, allocated once: host slabs (each under {@link
 * Device#MAX_HOST_SLAB_BYTES}, several slots per slab), one device slab (normalisation table, then
 * one region per slot) and a small host buffer holding the table for its upload. The constructor
 * frees what it allocated if a later allocation fails; {@link #close()} frees device memory, then
 * host memory (idempotent). Owned by the {@link GpuFeeder}.
 */
final class SlotArena implements AutoCloseable {
  static final long ALIGN = 256;
  final DeviceBuffer device;
  final HostBuffer tableHost;
  final long tableBytes;
  final List<SlotMemory> slots = new ArrayList<>();
  private final List<HostBuffer> hostSlabs = new ArrayList<>();
  private boolean closed;

  SlotArena(
      Device dev,
      int slotCount,
      int maxRows,
      NormalizeSpec spec,
      boolean withImages,
      List<SlotField> fields) {
    // a feeder without images has an empty image region and nothing to normalise
    long images = withImages ? (long) maxRows * spec.inputBytesPerImage() : 0;
    FieldRegions regions = FieldRegions.layout(fields, maxRows);
    long hostPerSlot = align(images) + align(8L * maxRows) + regions.bytes();
    if (hostPerSlot >= Device.MAX_HOST_SLAB_BYTES) {
      throw new IllegalArgumentException(
          "Invalid batch size: "
              + maxRows
              + " (one slot needs "
              + hostPerSlot
              + " bytes"
              + (fields.isEmpty() ? "" : ", " + regions.bytes() + " of them for the extra fields")
              + "; a pinned slab must stay under 2 GiB)");
    }
    long output =
        !withImages || spec.type() == ElementType.UINT8
            ? 0
            : align(maxRows * spec.outputBytesPerImage());
    long devicePerSlot = align(images) + align(8L * maxRows) + output + regions.bytes();
    tableBytes = align(8L * spec.channels());
    int perSlab = (int) Math.min(slotCount, (Device.MAX_HOST_SLAB_BYTES - 1) / hostPerSlot);
    HostBuffer table = null;
    DeviceBuffer deviceSlab = null;
    try {
      table = dev.allocateHost(tableBytes);
      writeTable(table, spec.table());
      deviceSlab = dev.allocateDevice(tableBytes + devicePerSlot * slotCount);
      for (int i = 0; i < slotCount; i++) {
        if (i % perSlab == 0) {
          hostSlabs.add(dev.allocateHost(hostPerSlot * Math.min(perSlab, slotCount - i)));
        }
        long h = hostPerSlot * (i % perSlab);
        long d = tableBytes + devicePerSlot * i;
        long dLabels = d + align(images);
        long hFields = h + align(images) + align(8L * maxRows);
        slots.add(
            new SlotMemory(
                hostSlabs.get(hostSlabs.size() - 1),
                h,
                h + align(images),
                d,
                dLabels,
                output == 0 ? d : dLabels + align(8L * maxRows),
                maxRows,
                regions.at(hFields, dLabels + align(8L * maxRows) + output)));
      }
    } catch (RuntimeException | Error e) {
      closeAll(deviceSlab, table, e);
      throw e;
    }
    this.device = deviceSlab;
    this.tableHost = table;
  }

  private void closeAll(DeviceBuffer deviceSlab, HostBuffer table, Throwable primary) {
    for (AutoCloseable c : new AutoCloseable[] {deviceSlab, table}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception ex) {
        primary.addSuppressed(ex);
      }
    }
    for (int i = hostSlabs.size() - 1; i >= 0; i--) {
      try {
        hostSlabs.get(i).close();
      } catch (RuntimeException ex) {
        primary.addSuppressed(ex);
      }
    }
  }

  int hostSlabCount() {
    return hostSlabs.size();
  }

  private static void writeTable(HostBuffer table, float[] values) {
    for (int i = 0; i < values.length; i++) {
      MemoryUtil.putInt(table.address() + 4L * i, Float.floatToRawIntBits(values[i]));
    }
  }

  static long align(long n) {
    return (n + ALIGN - 1) / ALIGN * ALIGN;
  }

  /** Frees the device slab, then the table and host slabs in reverse order. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    RuntimeException first = null;
    List<AutoCloseable> order = new ArrayList<>(List.of(device, tableHost));
    for (int i = hostSlabs.size() - 1; i >= 0; i--) {
      order.add(hostSlabs.get(i));
    }
    for (AutoCloseable c : order) {
      try {
        c.close();
      } catch (Exception e) {
        if (first == null) {
          first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
