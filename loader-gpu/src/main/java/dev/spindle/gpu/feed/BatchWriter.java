package dev.spindle.gpu.feed;

import dev.spindle.gpu.device.NormalizeSpec;
import dev.spindle.gpu.device.PinnedPool;
import java.util.BitSet;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.ExtensionTypeVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;

/**
 * Puts one Arrow batch into a slot: the uint8 image bytes either in place (zero copy, when the
 * producer allocated them from the feeder's pinned pool) or with one staging {@code memcpy} from
 * the list's child buffer into the slot; labels as int64 into the slot's host range; keys and plan
 * indices into the slot's host arrays.
 *
 * <p>Expected columns: {@code image} (FixedSizeList&lt;uint8&gt;, bare or as the storage of an
 * extension type such as {@code arrow.fixed_shape_tensor}), {@code label} (int32 or int64), {@code
 * key} (utf8), {@code index} (int64), then exactly the feeder's extra fields ({@link SlotField}),
 * written by {@link FieldWriter} into the slot's field regions. Runs on filler threads; stateless.
 */
final class BatchWriter {
  private BatchWriter() {}

  /**
   * Validates {@code root} against {@code config} (image shape, batch size, whether batches carry
   * images), then fills {@code m}; rows set in {@code unweighted} get loss weight 0, the others 1.
   * A feeder without images takes a root without an {@code image} column (one with it is refused:
   * its pixels would be dropped unseen).
   *
   * @return the image bytes copied on the host (the staging copy), 0 when placed in place
   */
  static long write(
      VectorSchemaRoot root,
      BitSet unweighted,
      SlotMemory m,
      FeederConfig config,
      PinnedPool pool) {
    NormalizeSpec spec = config.normalize();
    int maxRows = config.maxRows();
    int rows = root.getRowCount();
    if (rows <= 0 || rows > maxRows) {
      throw new IllegalArgumentException(
          "Invalid batch: " + rows + " rows (must be 1.." + maxRows + ")");
    }
    VarCharVector keys = column(root, "key", VarCharVector.class);
    ArrowBuf data = null;
    if (config.images()) {
      data = checkImages(images(root, spec), keys, rows, spec);
    } else if (root.getVector("image") != null) {
      throw new IllegalArgumentException(
          "Invalid batch: column 'image' given to a feeder without images (its samples have no"
              + " image; drop the column or declare the image)");
    }
    writeLabels(root.getVector("label"), keys, rows, m);
    writeKeys(keys, rows, m);
    BigIntVector index = column(root, "index", BigIntVector.class);
    for (int i = 0; i < rows; i++) {
      requireValue(index, i, keys);
      m.indices[i] = index.get(i);
      m.weights[i] = unweighted.get(i) ? 0f : 1f;
    }
    FieldWriter.write(root, keys, rows, m);
    m.rows = rows;
    if (data == null) {
      m.written = false;
      m.source = m.host;
      m.sourceOffset = m.hostImages;
      return 0;
    }
    return placeImages(data, (long) rows * spec.inputBytesPerImage(), m, pool);
  }

  /**
   * Zero copy when the images already live in the feeder's pinned pool: the slot reads them in
   * place and holds a reference until the copy completes. Otherwise one staging memcpy. Last step
   * of {@link #write}, so nothing can fail after the reference is taken. Returns the bytes copied.
   */
  private static long placeImages(ArrowBuf data, long bytes, SlotMemory m, PinnedPool pool) {
    m.written = false;
    PinnedPool.Location at = pool == null ? null : pool.locate(data.memoryAddress(), bytes);
    if (at != null) {
      data.getReferenceManager().retain();
      m.retained = data.getReferenceManager();
      m.source = at.slab();
      m.sourceOffset = at.offset();
      return 0;
    }
    MemoryUtil.copyMemory(data.memoryAddress(), m.host.address() + m.hostImages, bytes);
    m.source = m.host;
    m.sourceOffset = m.hostImages;
    return bytes;
  }

  private static FixedSizeListVector images(VectorSchemaRoot root, NormalizeSpec spec) {
    FieldVector v = column(root, "image", FieldVector.class);
    ValueVector storage = v instanceof ExtensionTypeVector<?> e ? e.getUnderlyingVector() : v;
    if (!(storage instanceof FixedSizeListVector list)) {
      throw new IllegalArgumentException(
          "Invalid batch: column 'image' is "
              + v.getField().getType()
              + " (must be FixedSizeList<uint8>)");
    }
    ValueVector child = list.getDataVector();
    if (!(child instanceof UInt1Vector || child instanceof TinyIntVector)) {
      throw new IllegalArgumentException(
          "Invalid batch: column 'image' holds " + child.getField().getType() + " (must be uint8)");
    }
    if (list.getListSize() != spec.inputBytesPerImage()) {
      throw new IllegalArgumentException(
          "Invalid batch: image size "
              + list.getListSize()
              + " bytes (must be "
              + spec.height()
              + "x"
              + spec.width()
              + "x"
              + spec.channels()
              + " = "
              + spec.inputBytesPerImage()
              + ")");
    }
    return list;
  }

  private static ArrowBuf checkImages(
      FixedSizeListVector list, VarCharVector keys, int rows, NormalizeSpec spec) {
    for (int i = 0; i < rows && list.getNullCount() > 0; i++) {
      requireValue(list, i, keys);
    }
    long bytes = (long) rows * spec.inputBytesPerImage();
    ValueVector child = list.getDataVector();
    if (child.getValueCount() < bytes) {
      throw new IllegalArgumentException(
          "Invalid batch: image data holds "
              + child.getValueCount()
              + " bytes (must be >= "
              + bytes
              + " for "
              + rows
              + " rows)");
    }
    return child.getDataBuffer();
  }

  private static void writeLabels(FieldVector v, VarCharVector keys, int rows, SlotMemory m) {
    if (v == null) {
      throw new IllegalArgumentException("Invalid batch: no column 'label'");
    }
    long at = m.host.address() + m.hostLabels;
    for (int i = 0; i < rows; i++) {
      requireValue(v, i, keys);
      long label;
      if (v instanceof IntVector iv) {
        label = iv.get(i);
      } else if (v instanceof BigIntVector bv) {
        label = bv.get(i);
      } else {
        throw new IllegalArgumentException(
            "Invalid batch: column 'label' is "
                + v.getField().getType()
                + " (must be int32 or int64)");
      }
      m.labels[i] = label;
      MemoryUtil.putLong(at + 8L * i, label);
    }
  }

  private static void writeKeys(VarCharVector keys, int rows, SlotMemory m) {
    int used = 0;
    for (int i = 0; i < rows; i++) {
      requireValue(keys, i, keys);
      long start = keys.getStartOffset(i);
      int len = (int) (keys.getEndOffset(i) - start);
      m.ensureKeyCapacity(used, len);
      keys.getDataBuffer().getBytes(start, m.keyBytes, used, len);
      used += len;
      m.keyEnds[i] = used;
    }
  }

  static void requireValue(ValueVector v, int row, VarCharVector keys) {
    if (v.isNull(row)) {
      String key =
          keys.isNull(row)
              ? "<null>"
              : new String(keys.get(row), java.nio.charset.StandardCharsets.UTF_8);
      throw new IllegalArgumentException(
          "Invalid batch: column '"
              + v.getName()
              + "' is null at row "
              + row
              + " (key '"
              + key
              + "')");
    }
  }

  static <T> T column(VectorSchemaRoot root, String name, Class<T> type) {
    FieldVector v = root.getVector(name);
    if (v == null) {
      throw new IllegalArgumentException(
          "Invalid batch: no column '"
              + name
              + "' (columns: "
              + root.getSchema().getFields().stream().map(f -> f.getName()).toList()
              + ")");
    }
    if (!type.isInstance(v)) {
      throw new IllegalArgumentException(
          "Invalid batch: column '"
              + name
              + "' is "
              + v.getField().getType()
              + " (must be "
              + type.getSimpleName()
              + ")");
    }
    return type.cast(v);
  }
}
