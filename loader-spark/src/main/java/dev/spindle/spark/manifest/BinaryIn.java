package dev.spindle.spark.manifest;

/**
 * Reads {@link BinaryOut}'s primitives from a byte array, checking every length against what is
 * left: a damaged or truncated input ends in {@link IllegalArgumentException} ("Invalid binary
 * manifest: …"), never in an index error or an allocation larger than the input. One owner, one
 * thread.
 */
final class BinaryIn {
  private final byte[] buf;
  private final int end;
  private int pos;

  BinaryIn(byte[] buf, int off, int len) {
    this.buf = buf;
    this.pos = off;
    this.end = off + len;
  }

  int remaining() {
    return end - pos;
  }

  int position() {
    return pos;
  }

  int readByte(String what) {
    need(1, what);
    return buf[pos++] & 0xFF;
  }

  long readVarint(String what) {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      int b = readByte(what);
      v |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (shift == 63 && b > 1) {
          break; // a tenth byte may only hold the top bit
        }
        return v;
      }
    }
    throw BinaryIn.invalid(what + ": a varint longer than 64 bits");
  }

  long readZigZag(String what) {
    long v = readVarint(what);
    return (v >>> 1) ^ -(v & 1);
  }

  /** A varint that must lie in {@code [0, max]}. */
  int readCount(String what, long max) {
    long v = readVarint(what);
    if (v < 0 || v > max) {
      throw invalid(what + " " + Long.toUnsignedString(v) + " (at most " + max + " here)");
    }
    return (int) v;
  }

  /** A string ({@link Wtf8}); bytes that are no such encoding read as U+FFFD. */
  String readString(String what) {
    long len = readVarint(what + "'s length");
    if (len < 0 || len > remaining()) {
      throw invalid(what + " of " + Long.toUnsignedString(len) + " bytes, past the end");
    }
    String s = Wtf8.decode(buf, pos, (int) len);
    pos += (int) len;
    return s;
  }

  int readInt(String what) {
    need(4, what);
    int v =
        ((buf[pos] & 0xFF) << 24)
            | ((buf[pos + 1] & 0xFF) << 16)
            | ((buf[pos + 2] & 0xFF) << 8)
            | (buf[pos + 3] & 0xFF);
    pos += 4;
    return v;
  }

  long readLong(String what) {
    return ((long) readInt(what) << 32) | (readInt(what) & 0xFFFFFFFFL);
  }

  /** Reads {@code len} bytes into {@code dest} at {@code off}. */
  void readInto(byte[] dest, int off, int len, String what) {
    need(len, what);
    System.arraycopy(buf, pos, dest, off, len);
    pos += len;
  }

  byte[] readBytes(int len, String what) {
    need(len, what);
    byte[] out = java.util.Arrays.copyOfRange(buf, pos, pos + len);
    pos += len;
    return out;
  }

  private void need(int n, String what) {
    if (n > end - pos) {
      throw invalid("it ends inside " + what);
    }
  }

  static IllegalArgumentException invalid(String what) {
    return new IllegalArgumentException("Invalid binary manifest: " + what);
  }
}
