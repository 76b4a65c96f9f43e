package dev.spindle.spark.image;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * The native region decoder's seek indexes ({@code src/main/native/spindle_seek.c}), one per JPEG
 * decoded, kept for the next decode of the same bytes: where each stretch of MCUs begins in the
 * Huffman-coded scan, so that the next epoch's decode of the image starts each row of its region at
 * the MCU it needs rather than Huffman-decoding all the MCUs above and beside it. The pixels are
 * the same bytes with or without an index ({@code NativeJpegSeekSuite}).
 *
 * <p>An index is a few kilobytes (a 640x408 photo's is 2 KB: 8 bytes every 4 MCUs of every row,
 * zero in the rows not decoded yet) and is found by the JPEG's content: its length and two CRCs of
 * its bytes (CRC-32C and CRC-32, 64 bits in all, both computed by the CPU's own instructions), so a
 * changed file never finds an old index. The indexes live on the JVM heap, least recently used
 * dropped first, up to a sixteenth of the maximum heap (at least 4 MiB, at most 128 MiB): about
 * 30,000 such photos at a 1 GiB heap, 3,700 at the 128 MiB {@code bin/bench-vs-torch} gives
 * Spindle. The system property {@code spindle.image.seekIndex=false} turns them off. Thread-safe.
 */
final class JpegSeekIndex {
  /** Whether indexes are kept ({@code spindle.image.seekIndex}, default true). */
  static final boolean ENABLED =
      !"false".equalsIgnoreCase(System.getProperty("spindle.image.seekIndex", "").trim());

  /** The most bytes of indexes kept. */
  static final long CAPACITY =
      Math.max(4L << 20, Math.min(128L << 20, Runtime.getRuntime().maxMemory() / 16));

  /** Where an index holds how many MCU rows it knows (IX_KNOWN in spindle_seek.c). */
  static final int KNOWN = 5;

  /** A JPEG's identity: its length and 64 bits of CRCs of its bytes. */
  record Key(int length, long crcs) {}

  private static final Map<Key, long[]> INDEXES = new LinkedHashMap<>(1024, 0.75f, true);
  private static long bytes;
  private static long hits;
  private static long misses;

  private JpegSeekIndex() {}

  /** The key of the {@code length} bytes of {@code in} from position 0 (left unchanged). */
  static Key key(ByteBuffer in, int length) {
    ByteBuffer data = in.duplicate().position(0).limit(length);
    CRC32C c = new CRC32C();
    c.update(data);
    CRC32 d = new CRC32();
    d.update(data.position(0));
    return new Key(length, c.getValue() << 32 | d.getValue());
  }

  /**
   * A copy of the index kept for {@code key}, or null: {@link #put} grows the kept array in place,
   * so a decode never reads the array itself.
   */
  static synchronized long[] get(Key key) {
    long[] index = INDEXES.get(key);
    if (index == null) {
      misses++;
      return null;
    }
    hits++;
    return index.clone();
  }

  /**
   * Keeps {@code index} for {@code key} unless the one kept knows at least as many rows. An index
   * that grew is copied into the array kept for the image (every export of an image has the same
   * length): replacing it left the old array, which had lived long enough to be tenured, as garbage
   * in the old generation at each growth (a random crop's decodes grow an image's index over
   * several epochs), which is resident memory until a full collection.
   */
  static synchronized void put(Key key, long[] index) {
    long[] old = INDEXES.get(key);
    if (old != null && old[KNOWN] >= index[KNOWN]) {
      return;
    }
    if (old != null && old.length == index.length) {
      System.arraycopy(index, 0, old, 0, index.length);
      return;
    }
    INDEXES.put(key, index);
    bytes += sizeOf(index) - (old == null ? 0 : sizeOf(old));
    var eldest = INDEXES.entrySet().iterator();
    while (bytes > CAPACITY && eldest.hasNext()) {
      bytes -= sizeOf(eldest.next().getValue());
      eldest.remove();
    }
  }

  /** Decodes that found an index, and that did not, since the JVM started. */
  static synchronized long[] hitsAndMisses() {
    return new long[] {hits, misses};
  }

  /** Drops every index (for tests). */
  static synchronized void clear() {
    INDEXES.clear();
    bytes = 0;
  }

  private static long sizeOf(long[] index) {
    return 16L + 8L * index.length + 48; // the array, its key and map entry
  }
}
