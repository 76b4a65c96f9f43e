package dev.spindle.spark.shard;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Where each sample of an uncompressed tar shard lies: sample {@code i} is the bytes {@code
 * [start(i), end(i))}, from the first header block of its first member (pax and long-name headers
 * included) to the end of its last member's padded content; read alone through {@link
 * TarSampleCursor}, they yield that sample exactly as a walk of the whole shard does. Recorded when
 * the manifest is counted ({@link ShardFiles#counting}), by the same walk, and only for a shard
 * that walk found whole (no damage, no repeated key). Bound to the shard it was taken from (size,
 * modification time, sample count; on a local file system also the file's inode change time):
 * {@link #mismatch} and {@link #changedSince} say why it does not describe a shard. Immutable; any
 * thread. The file format ({@code spindle-tar-index/1}) is written down in {@code
 * dev.spindle.spark.manifest}'s package documentation.
 */
final class TarIndex {
  static final String FORMAT = "spindle-tar-index/1";
  private static final byte[] MAGIC = (FORMAT + "\n").getBytes(StandardCharsets.US_ASCII);

  private final long shardBytes;
  private final long modificationTime;
  private final long changeTime; // a local file's inode change time, ns; -1 elsewhere
  private final long[] starts;
  private final long[] ends;

  TarIndex(long shardBytes, long modificationTime, long changeTime, long[] starts, long[] ends) {
    if (starts.length != ends.length) {
      throw new IllegalArgumentException("Invalid tar index: starts and ends differ in length");
    }
    this.shardBytes = shardBytes;
    this.modificationTime = modificationTime;
    this.changeTime = changeTime;
    this.starts = starts;
    this.ends = ends;
  }

  int samples() {
    return starts.length;
  }

  long start(int position) {
    return starts[position];
  }

  long end(int position) {
    return ends[position];
  }

  /** Bytes this index holds in memory, for the executor's bounded cache of indexes. */
  long memoryBytes() {
    return 64 + 16L * starts.length;
  }

  /**
   * Why this index does not describe a shard whose local file now has the inode change time {@code
   * changeTime} (-1: not a local file): any write to a local file moves it, and so does setting its
   * modification time back ({@code touch -d}), which the manifest's check cannot see.
   */
  String changedSince(long changeTime) {
    return this.changeTime >= 0 && changeTime != this.changeTime
        ? "the shard's file was changed (its inode change time is "
            + changeTime
            + " ns, the index was taken at "
            + this.changeTime
            + ")"
        : null;
  }

  /** Why this index does not describe {@code shard} as the manifest records it, or null. */
  String mismatch(Shard shard) {
    if (shardBytes != shard.bytes()) {
      return "it was taken of " + shardBytes + " bytes, the shard has " + shard.bytes();
    }
    if (modificationTime != shard.modificationTime()) {
      return "it was taken of the shard modified at "
          + modificationTime
          + ", the manifest records "
          + shard.modificationTime();
    }
    if (starts.length != shard.samples()) {
      return "it holds " + starts.length + " samples, the manifest records " + shard.samples();
    }
    return null;
  }

  /** The file's bytes ({@value #FORMAT}). */
  byte[] toBytes() {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 4 * starts.length);
    out.writeBytes(MAGIC);
    out.writeBytes(
        ByteBuffer.allocate(24)
            .putLong(shardBytes)
            .putLong(modificationTime)
            .putLong(changeTime)
            .array());
    varint(out, starts.length);
    long previousEnd = 0;
    for (int i = 0; i < starts.length; i++) {
      varint(out, starts[i] - previousEnd);
      varint(out, ends[i] - starts[i]);
      previousEnd = ends[i];
    }
    CRC32C crc = new CRC32C();
    crc.update(out.toByteArray());
    out.writeBytes(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
    return out.toByteArray();
  }

  /**
   * Decodes a file's bytes.
   *
   * @throws IllegalArgumentException ("Invalid tar index: …") for anything but an intact {@value
   *     #FORMAT} file
   */
  static TarIndex fromBytes(byte[] bytes) {
    if (bytes.length < MAGIC.length + 24 + 1 + 4
        || !Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
      throw invalid("not a " + FORMAT + " file");
    }
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    ByteBuffer in = ByteBuffer.wrap(bytes);
    if ((int) crc.getValue() != in.getInt(bytes.length - 4)) {
      throw invalid("CRC-32C mismatch (a damaged file)");
    }
    in.limit(bytes.length - 4).position(MAGIC.length);
    long shardBytes = in.getLong();
    long modificationTime = in.getLong();
    long changeTime = in.getLong();
    long n = varint(in);
    if (n > in.remaining() / 2) {
      throw invalid(n + " samples in " + bytes.length + " bytes");
    }
    long[] starts = new long[(int) n];
    long[] ends = new long[(int) n];
    long previousEnd = 0;
    for (int i = 0; i < n; i++) {
      starts[i] = Math.addExact(previousEnd, varint(in));
      ends[i] = Math.addExact(starts[i], varint(in));
      if (ends[i] <= starts[i] || ends[i] > shardBytes) {
        throw invalid("sample " + i + " at [" + starts[i] + ", " + ends[i] + ") of " + shardBytes);
      }
      previousEnd = ends[i];
    }
    if (in.hasRemaining()) {
      throw invalid(in.remaining() + " bytes after the last sample");
    }
    return new TarIndex(shardBytes, modificationTime, changeTime, starts, ends);
  }

  private static void varint(ByteArrayOutputStream out, long v) {
    while ((v & ~0x7fL) != 0) {
      out.write((int) ((v & 0x7f) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static long varint(ByteBuffer in) {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!in.hasRemaining()) {
        throw invalid("the file ends inside a number");
      }
      byte b = in.get();
      v |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        if (v < 0) {
          throw invalid("a number over 2^63");
        }
        return v;
      }
    }
    throw invalid("a number over 10 bytes");
  }

  private static IllegalArgumentException invalid(String what) {
    return new IllegalArgumentException("Invalid tar index: " + what);
  }
}
