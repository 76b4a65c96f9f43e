package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes a POSIX ustar archive of regular files with fixed metadata (mode 0644, mtime 0, owner 0),
 * so the same entries always give the same bytes. One thread. Closing finishes the archive and
 * closes the stream.
 */
public final class TarWriter implements AutoCloseable {
  private static final int BLOCK = 512;

  private final OutputStream out;
  private boolean closed;

  public TarWriter(OutputStream out) {
    this.out = out;
  }

  /** Appends one regular file. Names must be ASCII and at most 100 bytes. */
  public void add(String name, byte[] content) throws IOException {
    if (!StandardCharsets.US_ASCII.newEncoder().canEncode(name)) {
      throw new IllegalArgumentException("Invalid tar entry name: '" + name + "' (ASCII only)");
    }
    byte[] nameBytes = name.getBytes(StandardCharsets.US_ASCII);
    if (nameBytes.length == 0 || nameBytes.length > 100) {
      throw new IllegalArgumentException("Invalid tar entry name: '" + name + "' (1..100 bytes)");
    }
    byte[] header = new byte[BLOCK];
    System.arraycopy(nameBytes, 0, header, 0, nameBytes.length);
    octal(header, 100, 8, 0644);
    octal(header, 108, 8, 0);
    octal(header, 116, 8, 0);
    octal(header, 124, 12, content.length);
    octal(header, 136, 12, 0);
    header[156] = '0';
    System.arraycopy("ustar\u000000".getBytes(StandardCharsets.US_ASCII), 0, header, 257, 8);
    for (int i = 148; i < 156; i++) {
      header[i] = ' ';
    }
    long sum = 0;
    for (byte b : header) {
      sum += b & 0xff;
    }
    octal(header, 148, 7, sum);
    out.write(header);
    out.write(content);
    int pad = (BLOCK - content.length % BLOCK) % BLOCK;
    out.write(new byte[pad]);
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try (OutputStream o = out) {
      o.write(new byte[2 * BLOCK]);
    }
  }

  private static void octal(byte[] header, int offset, int length, long value) {
    String digits = Long.toOctalString(value);
    int width = length - 1;
    if (digits.length() > width) {
      throw new IllegalArgumentException("Value " + value + " too large for tar field");
    }
    String padded = "0".repeat(width - digits.length()) + digits;
    System.arraycopy(padded.getBytes(StandardCharsets.US_ASCII), 0, header, offset, width);
    header[offset + width] = 0;
  }
}
