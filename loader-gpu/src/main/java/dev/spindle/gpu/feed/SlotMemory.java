package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.HostBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.arrow.memory.ReferenceManager;

/**
 * One slot's memory: its range of a host slab (uint8 images, then int64 labels, then each extra
 * field's region), its offsets in the device slab (the same parts, the normalised output after the
 * labels), and host-side metadata (labels, keys, plan indices, loss weights, the bytes of each
 * field's values in the current batch). Created once per slot by {@link SlotArena}; owned by
 * whoever holds the slot (see {@code SlotState}).
 */
final class SlotMemory {
  final HostBuffer host;
  final long hostImages;
  final long hostLabels;
  final long deviceInput;
  final long deviceLabels;
  final long deviceOutput;
  final long[] labels;
  final long[] indices;

  /** Loss weight per row: 1 for a real sample, 0 for padding and stand-ins. */
  final float[] weights;

  /** The feeder's extra fields, and where each one's region starts in this slot. */
  final FieldRegions fields;

  /** Bytes of each extra field's values in the current batch (its offsets: 4 × (rows + 1)). */
  final long[] fieldValueBytes;

  final int[] keyEnds;
  byte[] keyBytes;
  int rows;
  long submitNanos;

  /** Where the copy engine reads the images: this slot's host range, or a pinned Arrow buffer. */
  HostBuffer source;

  long sourceOffset;

  /** The producer's Arrow buffer held for a zero-copy batch until its copy completes, or null. */
  ReferenceManager retained;

  /**
   * The batch was written into this slot by a {@link SlotWriter} (no staging copy): on a host
   * device into the device slab itself, so the copy thread has nothing to copy.
   */
  boolean written;

  SlotMemory(
      HostBuffer host,
      long hostImages,
      long hostLabels,
      long deviceInput,
      long deviceLabels,
      long deviceOutput,
      int maxRows,
      FieldRegions fields) {
    this.host = host;
    this.hostImages = hostImages;
    this.hostLabels = hostLabels;
    this.deviceInput = deviceInput;
    this.deviceLabels = deviceLabels;
    this.deviceOutput = deviceOutput;
    this.labels = new long[maxRows];
    this.indices = new long[maxRows];
    this.weights = new float[maxRows];
    this.keyEnds = new int[maxRows];
    this.keyBytes = new byte[64 * maxRows];
    this.fields = fields;
    this.fieldValueBytes = new long[fields.count()];
  }

  /** Host address of field {@code i}'s values in this slot. */
  long hostValues(int i) {
    return host.address() + fields.hostBase() + fields.values(i);
  }

  /** Host address of field {@code i}'s offsets in this slot. */
  long hostOffsets(int i) {
    return host.address() + fields.hostBase() + fields.offsets(i);
  }

  /** Offset of field {@code i}'s values in the device slab. */
  long deviceValues(int i) {
    return fields.deviceBase() + fields.values(i);
  }

  /** Offset of field {@code i}'s offsets in the device slab. */
  long deviceOffsets(int i) {
    return fields.deviceBase() + fields.offsets(i);
  }

  /** Bytes of the extra fields' values and offsets in the current batch. */
  long fieldBytes() {
    long n = 0;
    for (int i = 0; i < fieldValueBytes.length; i++) {
      n += fieldValueBytes[i] + (fields.field(i).variable() ? 4L * (rows + 1) : 0);
    }
    return n;
  }

  /** Drops the hold on a zero-copy source, if any (the device no longer reads it). */
  void releaseSource() {
    ReferenceManager r = retained;
    retained = null;
    if (r != null) {
      r.release();
    }
  }

  /** Room for {@code more} key bytes after {@code used}; grows only on this slow path. */
  void ensureKeyCapacity(int used, int more) {
    if (used + more > keyBytes.length) {
      keyBytes = Arrays.copyOf(keyBytes, Math.max(2 * keyBytes.length, used + more));
    }
  }

  String key(int row) {
    int start = row == 0 ? 0 : keyEnds[row - 1];
    return new String(keyBytes, start, keyEnds[row] - start, StandardCharsets.UTF_8);
  }
}
