package dev.spindle.gpu.feed;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;

/**
 * Puts a batch's extra fields into a slot's field regions ({@link FieldRegions}): a fixed field's
 * {@code rows} values as one contiguous array; a variable one's values back to back and {@code rows
 * + 1} int32 offsets, in elements, from 0. Refuses a batch whose extra columns are not the feeder's
 * fields (names, order, types), a null, and a value over the bytes its field reserves per row
 * (naming field, row, key and both sizes): producers quarantine such samples before they are
 * batched, so this is the guard, not the policy. Runs on filler threads; stateless.
 */
final class FieldWriter {
  private FieldWriter() {}

  /** Writes every extra field of {@code root} into {@code m}'s host field regions. */
  static void write(VectorSchemaRoot root, VarCharVector keys, int rows, SlotMemory m) {
    FieldRegions fields = m.fields;
    checkColumns(root, fields);
    for (int i = 0; i < fields.count(); i++) {
      SlotField f = fields.field(i);
      FieldVector v = root.getVector(f.name());
      m.fieldValueBytes[i] =
          f.variable()
              ? writeVariable(f, v, keys, rows, m.hostValues(i), m.hostOffsets(i))
              : writeFixed(f, v, keys, rows, m.hostValues(i));
    }
  }

  /** The extra columns must be the feeder's fields, in order, each of its field's type. */
  private static void checkColumns(VectorSchemaRoot root, FieldRegions fields) {
    List<String> extra = new ArrayList<>();
    root.getSchema().getFields().stream()
        .map(f -> f.getName())
        .filter(n -> !SlotField.CORE.contains(n))
        .forEach(extra::add);
    List<String> expected = fields.list().stream().map(SlotField::name).toList();
    if (!extra.equals(expected)) {
      throw new IllegalArgumentException(
          "Invalid batch: extra columns "
              + extra
              + " (the feeder was created with the fields "
              + expected
              + ")");
    }
    for (SlotField f : fields.list()) {
      SlotField got = columnField(root.getVector(f.name()));
      if (got.dtype() != f.dtype() || got.kind() != f.kind()) {
        throw new IllegalArgumentException(
            "Invalid batch: column '"
                + f.name()
                + "' is "
                + root.getVector(f.name()).getField().getType()
                + " ("
                + got.kind()
                + " "
                + got.dtype()
                + "; the feeder's field is "
                + f.kind()
                + " "
                + f.dtype()
                + ")");
      }
    }
  }

  private static SlotField columnField(FieldVector v) {
    try {
      return SlotField.of(v.getField(), 8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Invalid batch: " + e.getMessage(), e);
    }
  }

  /** Copies {@code rows} values; returns their bytes. */
  private static long writeFixed(
      SlotField f, FieldVector v, VarCharVector keys, int rows, long to) {
    requireValues(v, keys, rows);
    long bytes = (long) rows * f.dtype().width;
    MemoryUtil.copyMemory(((BaseFixedWidthVector) v).getDataBuffer().memoryAddress(), to, bytes);
    return bytes;
  }

  /** Copies the rows' values and rebased offsets; returns the values' bytes. */
  private static long writeVariable(
      SlotField f, FieldVector v, VarCharVector keys, int rows, long values, long offsets) {
    requireValues(v, keys, rows);
    ArrowBuf from = v.getOffsetBuffer();
    ValueVector elements = v instanceof ListVector list ? list.getDataVector() : null;
    int width = f.dtype().width;
    int first = from.getInt(0);
    for (int r = 0; r < rows; r++) {
      int start = from.getInt(4L * r);
      int end = from.getInt(4L * (r + 1));
      long bytes = (long) (end - start) * width;
      if (bytes > f.maxBytes()) {
        throw tooLarge(f, r, keys, bytes);
      }
      if (elements != null && elements.getNullCount() > 0) {
        requireElements(f, elements, start, end, r, keys);
      }
      MemoryUtil.putInt(offsets + 4L * r, start - first);
    }
    int last = from.getInt(4L * rows);
    MemoryUtil.putInt(offsets + 4L * rows, last - first);
    long bytes = (long) (last - first) * width;
    ArrowBuf data =
        elements != null
            ? ((BaseFixedWidthVector) elements).getDataBuffer()
            : ((BaseVariableWidthVector) v).getDataBuffer();
    MemoryUtil.copyMemory(data.memoryAddress() + (long) first * width, values, bytes);
    return bytes;
  }

  private static void requireValues(FieldVector v, VarCharVector keys, int rows) {
    for (int r = 0; r < rows && v.getNullCount() > 0; r++) {
      BatchWriter.requireValue(v, r, keys);
    }
  }

  private static void requireElements(
      SlotField f, ValueVector elements, int start, int end, int row, VarCharVector keys) {
    for (int e = start; e < end; e++) {
      if (elements.isNull(e)) {
        throw new IllegalArgumentException(
            "Invalid batch: field '"
                + f.name()
                + "' has a null element at row "
                + row
                + " (key '"
                + key(keys, row)
                + "')");
      }
    }
  }

  private static IllegalArgumentException tooLarge(
      SlotField f, int row, VarCharVector keys, long bytes) {
    return new IllegalArgumentException(
        "Invalid batch: field '"
            + f.name()
            + "' of row "
            + row
            + " (key '"
            + key(keys, row)
            + "') holds "
            + bytes
            + " bytes; the feeder reserves "
            + f.maxBytes()
            + " bytes a row for it (spark.spindle.fields.maxBytes)");
  }

  private static String key(VarCharVector keys, int row) {
    return keys.isNull(row) ? "<null>" : new String(keys.get(row), StandardCharsets.UTF_8);
  }
}
