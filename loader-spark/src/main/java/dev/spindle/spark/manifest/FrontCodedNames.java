package dev.spindle.spark.manifest;

import java.util.Arrays;

/**
 * Front coding of a sequence of names ({@link Wtf8} bytes), as the binary manifest stores paths:
 * each name is the number of leading bytes it shares with the name before, then the number of its
 * other bytes and those bytes. Sorted shard names share most of their bytes ({@code
 * train-0001233.tar}, {@code train-0001234.tar}: 15 of 17), so a name costs a few bytes. Bytes, not
 * characters, are shared: a cut inside a character joins back whole. One owner, one thread.
 */
final class FrontCodedNames {
  private byte[] previous = new byte[0];

  /** Reading: the prefix every name is read after (a shard path's base), then the name. */
  private byte[] buf;

  private final int start;
  private int length;

  /** A writer, or a reader of bare names. */
  FrontCodedNames() {
    this(new byte[0]);
  }

  /** A reader whose names are read after {@code prefix} ({@link #withPrefix}). */
  FrontCodedNames(byte[] prefix) {
    buf = Arrays.copyOf(prefix, prefix.length + 64);
    start = prefix.length;
  }

  void write(BinaryOut out, String name) {
    byte[] bytes = Wtf8.encode(name);
    int shared = Arrays.mismatch(previous, bytes);
    shared = shared < 0 ? bytes.length : shared;
    out.writeVarint(shared);
    out.writeVarint(bytes.length - shared);
    out.writeBytes(bytes, shared, bytes.length - shared);
    previous = bytes;
  }

  /** Reads the next name; {@link #name} and {@link #withPrefix} then return it. */
  void read(BinaryIn in, String what) {
    int shared = in.readCount(what + "'s shared prefix", length);
    int rest = in.readCount(what + "'s length", in.remaining());
    long end = (long) start + shared + rest;
    if (end > buf.length) {
      if (end > Integer.MAX_VALUE - 16) {
        throw BinaryIn.invalid(what + " of " + end + " bytes");
      }
      buf =
          Arrays.copyOf(
              buf, (int) Math.max(Math.min(buf.length * 2L, Integer.MAX_VALUE - 16), end));
    }
    in.readInto(buf, start + shared, rest, what);
    length = shared + rest;
  }

  boolean isEmpty() {
    return length == 0;
  }

  String name() {
    return Wtf8.decode(buf, start, length);
  }

  /** The prefix and the name, decoded as one string. */
  String withPrefix() {
    return Wtf8.decode(buf, 0, start + length);
  }
}
