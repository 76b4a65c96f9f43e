package dev.spindle.gpu.feed;

import java.util.List;

/**
 * Where a slot's extra fields lie: each field's values, then (variable fields) its {@code maxRows +
 * 1} int32 offsets, every part aligned to {@link SlotArena#ALIGN}, relative to the start of the
 * slot's field region; the region starts at {@code hostBase} in the slot's host slab and at {@code
 * deviceBase} in the device slab (one layout in both, so one copy per part moves it). Sized once at
 * creation for {@code maxRows} rows (a variable field: {@code maxBytes} bytes of values per row).
 * Immutable; any thread.
 */
record FieldRegions(List<SlotField> list, long[] at, long bytes, long hostBase, long deviceBase) {

  /** The layout of {@code fields} for slots of {@code maxRows} rows, not yet placed. */
  static FieldRegions layout(List<SlotField> fields, int maxRows) {
    long[] at = new long[2 * fields.size()];
    long n = 0;
    for (int i = 0; i < fields.size(); i++) {
      SlotField f = fields.get(i);
      at[2 * i] = n;
      n += SlotArena.align(f.valueBytes(maxRows));
      at[2 * i + 1] = n;
      n += SlotArena.align(f.offsetBytes(maxRows));
    }
    return new FieldRegions(List.copyOf(fields), at, n, 0, 0);
  }

  /** This layout placed at {@code host} in a slot's host slab and {@code device} in the slab. */
  FieldRegions at(long host, long device) {
    return new FieldRegions(list, at, bytes, host, device);
  }

  int count() {
    return list.size();
  }

  SlotField field(int i) {
    return list.get(i);
  }

  long values(int i) {
    return at[2 * i];
  }

  long offsets(int i) {
    return at[2 * i + 1];
  }
}
