package dev.spindle.spark.image;

/**
 * Reads the bits of one JPEG entropy-coded segment as libjpeg's bit reader does (jdhuff.c): a 0xFF
 * byte followed by 0x00 is a data 0xFF, 0xFF fill bytes before a marker are skipped, and any other
 * marker ends the data. Reads bytes only as bits are asked for, so what is left in the buffer is
 * never more than the last byte's padding. Confined to one thread.
 */
final class EntropyBits {
  private final byte[] data;
  private final int end;
  private int p;
  private int buffer;
  private int count;

  EntropyBits(byte[] data, int start, int end) {
    this.data = data;
    this.p = start;
    this.end = end;
  }

  /** The next {@code n} bits (1..16) as an unsigned value, or -1 when the segment ends first. */
  int bits(int n) {
    while (count < n) {
      int b = nextByte();
      if (b < 0) {
        return -1;
      }
      buffer = buffer << 8 | b;
      count += 8;
    }
    count -= n;
    return buffer >>> count & (1 << n) - 1;
  }

  /**
   * Drops the padding bits and passes the restart marker that must come next: true when it is
   * RST{@code number}. Bytes before the marker are skipped (libjpeg warns about them but reads on);
   * any other marker, or none, is the wrong one.
   */
  boolean restart(int number) {
    count = 0;
    int marker = skipToMarker();
    if (marker != 0xD0 + number) {
      return false;
    }
    p = markerEnd();
    return true;
  }

  /**
   * Skips the rest of the segment, restart markers included; returns the offset of the 0xFF of the
   * marker that ends it, or the end of the data.
   */
  int skipSegment() {
    while (true) {
      int marker = skipToMarker();
      if (marker < 0xD0 || marker > 0xD7) {
        return p;
      }
      p = markerEnd();
    }
  }

  /** The data byte at the position, or -1 at a marker or the end (the position stays there). */
  private int nextByte() {
    if (p >= end) {
      return -1;
    }
    int b = data[p] & 0xFF;
    if (b != 0xFF) {
      p++;
      return b;
    }
    int q = p + 1;
    while (q < end && data[q] == (byte) 0xFF) {
      q++;
    }
    if (q < end && data[q] == 0) {
      p = q + 1;
      return 0xFF;
    }
    return -1;
  }

  /** Moves to the next marker's 0xFF and returns its code, or -1 at the end of the data. */
  private int skipToMarker() {
    int b = 0;
    while (b >= 0) {
      b = nextByte();
    }
    int q = p;
    while (q < end && data[q] == (byte) 0xFF) {
      q++;
    }
    return q < end ? data[q] & 0xFF : -1;
  }

  /** The offset after the marker code at the position (past its fill bytes). */
  private int markerEnd() {
    int q = p;
    while (data[q] == (byte) 0xFF) {
      q++;
    }
    return q + 1;
  }
}
