package dev.spindle.spark.plan;

import java.io.ByteArrayOutputStream;

/**
 * Shard sample counts packed for shipping: each count as an unsigned LEB128 variable-length
 * integer, so a shard of 1,000 samples takes 2 bytes instead of an 8-byte offset. Pure; any thread.
 */
final class ShardCounts {
  private ShardCounts() {}

  /** The counts {@code offsets[i+1] - offsets[i]}, packed. */
  static byte[] encode(long[] offsets) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(2 * offsets.length);
    for (int i = 0; i + 1 < offsets.length; i++) {
      long v = offsets[i + 1] - offsets[i];
      while ((v & ~0x7FL) != 0) {
        out.write((int) (v & 0x7F) | 0x80);
        v >>>= 7;
      }
      out.write((int) v);
    }
    return out.toByteArray();
  }

  /** The offsets back from packed counts: 0, then the running sums. */
  static long[] decode(byte[] packed) {
    int shards = 0;
    for (byte b : packed) {
      shards += b >= 0 ? 1 : 0; // a count's last byte has its high bit clear
    }
    long[] offsets = new long[shards + 1];
    int at = 0;
    for (int i = 0; i < shards; i++) {
      long v = 0;
      int shift = 0;
      byte b;
      do {
        b = packed[at++];
        v |= (long) (b & 0x7F) << shift;
        shift += 7;
      } while (b < 0);
      offsets[i + 1] = offsets[i] + v;
    }
    return offsets;
  }
}
