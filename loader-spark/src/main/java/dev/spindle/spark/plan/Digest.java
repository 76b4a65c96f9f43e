package dev.spindle.spark.plan;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The digest of an ordered sequence of dataset indices: SHA-256 over each index as 8 big-endian
 * bytes, written as 64 lowercase hex digits. Order matters; equal digests mean the same sequence.
 * In Python: {@code hashlib.sha256(b"".join(i.to_bytes(8, "big", signed=True) for i in
 * seq)).hexdigest()}.
 *
 * <p>An instance accumulates one sequence and is owned by one thread; the static helpers may be
 * called from any thread.
 */
public final class Digest {
  private final MessageDigest sha = sha256();
  private final ByteBuffer buffer = ByteBuffer.allocate(8 * 1024);
  private long count;
  private boolean finished;

  /** The digest of the whole array. */
  public static String of(long[] indices) {
    return of(indices, 0, indices.length);
  }

  /** The digest of {@code indices[from, from + length)}. */
  public static String of(long[] indices, int from, int length) {
    return new Digest().update(indices, from, length).hex();
  }

  /** Appends one index. */
  public Digest update(long index) {
    checkOpen();
    if (buffer.remaining() < Long.BYTES) {
      flush();
    }
    buffer.putLong(index);
    count++;
    return this;
  }

  /** Appends {@code indices[from, from + length)} in order. */
  public Digest update(long[] indices, int from, int length) {
    if (from < 0 || length < 0 || from + length > indices.length) {
      throw new IndexOutOfBoundsException(
          "Invalid range [" + from + ", " + from + " + " + length + ") of " + indices.length);
    }
    for (int i = from; i < from + length; i++) {
      update(indices[i]);
    }
    return this;
  }

  /** How many indices were appended. */
  public long count() {
    return count;
  }

  /** The digest of everything appended so far; appending afterwards is refused. */
  public String hex() {
    checkOpen();
    flush();
    finished = true;
    return HexFormat.of().formatHex(sha.digest());
  }

  private void checkOpen() {
    if (finished) {
      throw new IllegalStateException("Digest already finished after " + count + " indices");
    }
  }

  private void flush() {
    buffer.flip();
    sha.update(buffer);
    buffer.clear();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("The JVM has no SHA-256", e);
    }
  }
}
