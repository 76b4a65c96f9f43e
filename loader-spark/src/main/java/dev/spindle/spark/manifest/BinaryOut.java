package dev.spindle.spark.manifest;

import java.util.Arrays;

/**
 * A growing byte buffer with the binary manifest's primitives: LEB128 varints (unsigned, and zigzag
 * for signed values), length-prefixed strings ({@link Wtf8}), big-endian fixed-width numbers. One
 * owner, one thread.
 */
final class BinaryOut {
  private byte[] buf;
  private int size;

  BinaryOut(int capacity) {
    buf = new byte[Math.max(16, capacity)];
  }

  int size() {
    return size;
  }

  byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }

  /** The bytes written so far; valid up to {@link #size()}, until the next write. */
  byte[] array() {
    return buf;
  }

  void writeByte(int b) {
    ensure(1);
    buf[size++] = (byte) b;
  }

  void writeBytes(byte[] bytes, int off, int len) {
    ensure(len);
    System.arraycopy(bytes, off, buf, size, len);
    size += len;
  }

  /** An unsigned LEB128 varint: 7 bits a byte, low bits first, at most 10 bytes. */
  void writeVarint(long v) {
    ensure(10);
    while ((v & ~0x7FL) != 0) {
      buf[size++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[size++] = (byte) v;
  }

  /** A signed value as a varint of its zigzag form (0, -1, 1, -2, … → 0, 1, 2, 3, …). */
  void writeZigZag(long v) {
    writeVarint((v << 1) ^ (v >> 63));
  }

  /** A string as its byte length and its bytes ({@link Wtf8}: every string round-trips). */
  void writeString(String s) {
    byte[] bytes = Wtf8.encode(s);
    writeVarint(bytes.length);
    writeBytes(bytes, 0, bytes.length);
  }

  void writeInt(int v) {
    writeByte(v >>> 24);
    writeByte(v >>> 16);
    writeByte(v >>> 8);
    writeByte(v);
  }

  void writeLong(long v) {
    writeInt((int) (v >>> 32));
    writeInt((int) v);
  }

  private void ensure(int more) {
    if (size + more > buf.length) {
      long grown = Math.max((long) buf.length * 2, (long) size + more);
      if (grown > Integer.MAX_VALUE - 8) {
        throw new IllegalStateException("A binary manifest cannot exceed 2 GB");
      }
      buf = Arrays.copyOf(buf, (int) grown);
    }
  }
}
