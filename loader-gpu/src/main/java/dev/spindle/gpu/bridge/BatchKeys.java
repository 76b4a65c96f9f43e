package dev.spindle.gpu.bridge;

import java.nio.charset.StandardCharsets;

/**
 * How sample keys fit in a BATCH frame (rule in {@code PROTOCOL.md}, "Sample keys"): each key is
 * cut to at most {@link #limit} UTF-8 bytes, at a character boundary, so a BATCH of any served
 * batch size stays within {@link Wire#MAX_PAYLOAD}. Keys name samples for people (logs, reports);
 * the plan indices, sent whole, identify them. Stateless; any thread.
 */
final class BatchKeys {
  /** Most bytes of a key in BATCH, whatever the batch size. */
  static final int MAX_KEY_BYTES = 256;

  /** Most rows a served batch may have: every row still gets a few key bytes. */
  static final int MAX_ROWS = 32_768;

  /** Bytes kept for BATCH's fields other than the per-row ones (they take at most 135). */
  private static final int FIXED = 200;

  /** Per row: the i64 plan index, the f32 weight and the key's u32 length. */
  private static final int PER_ROW = 16;

  private BatchKeys() {}

  /** Most UTF-8 bytes of each key in a BATCH of {@code rows} rows without extra fields. */
  static int limit(int rows) {
    return limit(rows, 0);
  }

  /**
   * Most UTF-8 bytes of each key in a BATCH of {@code rows} rows whose field table takes {@code
   * fieldTable} bytes beyond the empty table's 2 (which {@code FIXED} covers).
   */
  static int limit(int rows, int fieldTable) {
    if (rows < 1 || rows > MAX_ROWS) {
      throw new IllegalArgumentException(
          "Invalid batch rows: "
              + rows
              + " (must be 1.."
              + MAX_ROWS
              + " to fit in a BATCH message)");
    }
    long room = (Wire.MAX_PAYLOAD - FIXED - (long) fieldTable - (long) PER_ROW * rows) / rows;
    return (int) Math.min(MAX_KEY_BYTES, room);
  }

  /**
   * {@code key}'s UTF-8 bytes, or their longest prefix of at most {@code limit} bytes that ends at
   * a character boundary.
   */
  static byte[] cut(String key, int limit) {
    byte[] b = key.getBytes(StandardCharsets.UTF_8);
    if (b.length <= limit) {
      return b;
    }
    int end = limit;
    while (end > 0 && (b[end] & 0xC0) == 0x80) {
      end--; // b[end] continues a sequence that starts before it: cut before that sequence
    }
    return java.util.Arrays.copyOf(b, end);
  }
}
