package dev.spindle.gpu.bridge;

import dev.spindle.gpu.feed.DeviceBatch;
import dev.spindle.gpu.feed.SlotField;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * BATCH's field table ({@code PROTOCOL.md}, "Fields"): {@code u16} count, then per extra field
 * {@code str name, u8 dtype, u8 kind, i64 values offset, i64 values bytes, i64 offsets offset, i64
 * offsets bytes} (offsets in the memory the trainer mapped, like the image's; a fixed field's
 * offsets part is 0 and 0). A feeder without extra fields sends an empty table. Stateless; any
 * thread.
 */
final class BatchFields {
  /** Bytes of one entry besides its name: the name's length, dtype, kind, four i64. */
  private static final int ENTRY = 4 + 2 + 32;

  private BatchFields() {}

  /** Bytes of the table for {@code fields}, whatever the batch. */
  static int bytes(List<SlotField> fields) {
    int n = 2;
    for (SlotField f : fields) {
      n += ENTRY + f.name().getBytes(StandardCharsets.UTF_8).length;
    }
    return n;
  }

  /** Appends {@code b}'s field table to {@code o}, offsets taken from {@code memory}. */
  static void put(ByteBuffer o, DeviceBatch b, ServedMemory memory) {
    List<SlotField> fields = b.fields();
    o.putShort((short) fields.size());
    for (int i = 0; i < fields.size(); i++) {
      SlotField f = fields.get(i);
      Wire.putString(o, f.name());
      o.put((byte) f.dtype().code).put((byte) f.kind().code);
      long values = b.fieldValuesBytes(i);
      o.putLong(memory.offsetOf(b.fieldValuesPointer(i), values)).putLong(values);
      if (f.variable()) {
        long offsets = b.fieldOffsetsBytes(i);
        o.putLong(memory.offsetOf(b.fieldOffsetsPointer(i), offsets)).putLong(offsets);
      } else {
        o.putLong(0).putLong(0);
      }
    }
  }
}
