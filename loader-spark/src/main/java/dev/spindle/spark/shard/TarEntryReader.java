package dev.spindle.spark.shard;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Streams the regular-file entries of a POSIX tar archive (ustar, GNU long names, pax path
 * headers). One thread; not thread-safe. Does not close the stream it reads.
 *
 * <p>Call {@link #next()} to move to the next regular file, then either {@link #readContent(int)}
 * or nothing (the content is skipped on the following {@code next()}).
 */
final class TarEntryReader {
  private static final int BLOCK = 512;

  private final InputStream in;
  private final String shard;
  private final byte[] header = new byte[BLOCK];
  private long pendingSkip;
  private String name;
  private long size;
  private boolean contentRead;

  TarEntryReader(InputStream in, String shard) {
    this.in = in;
    this.shard = shard;
  }

  /** Moves to the next regular file; returns false at the end of the archive. */
  boolean next() throws IOException {
    skipPending();
    String longName = null;
    while (true) {
      if (!readHeader()) {
        return false;
      }
      char type = (char) header[156];
      long entrySize = parseOctal(124, 12);
      String headerName = headerName();
      if (type == 'L') { // GNU long name: the content is the next entry's name
        longName = cString(readBody(entrySize));
      } else if (type == 'x') { // pax extended header: look for a path record
        String path = paxPath(readBody(entrySize));
        longName = path != null ? path : longName;
      } else if (type == 'g' || type == '5' || type == '1' || type == '2' || type == 'K') {
        pendingSkip = padded(entrySize); // global pax, directory, links: no sample content
      } else if (type == '0' || type == '\0' || type == '7') {
        name = longName != null ? longName : headerName;
        size = entrySize;
        contentRead = false;
        pendingSkip = padded(entrySize);
        return true;
      } else {
        pendingSkip = padded(entrySize);
      }
      skipPending();
    }
  }

  /** The current entry's path inside the archive. */
  String name() {
    return name;
  }

  /** The current entry's size in bytes. */
  long size() {
    return size;
  }

  /**
   * Reads the current entry's content.
   *
   * @param maxBytes entries larger than this are refused (a lie in a header must not allocate GBs)
   */
  byte[] readContent(int maxBytes) throws IOException {
    if (contentRead) {
      throw new IllegalStateException("Content of " + name + " already read");
    }
    if (size > maxBytes) {
      throw new IOException(
          String.format(
              "Tar entry %s in %s is %d bytes, over the limit of %d bytes", name, shard, size, maxBytes));
    }
    byte[] content = readFully((int) size);
    pendingSkip -= size;
    contentRead = true;
    return content;
  }

  private boolean readHeader() throws IOException {
    int n = in.readNBytes(header, 0, BLOCK);
    if (n == 0) {
      return false; // archives without end-of-archive blocks exist in the wild
    }
    if (n < BLOCK) {
      throw new EOFException("Truncated tar header in " + shard + " (" + n + " of 512 bytes)");
    }
    if (isZeroBlock()) {
      return false;
    }
    verifyChecksum();
    return true;
  }

  private boolean isZeroBlock() {
    for (byte b : header) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  private void verifyChecksum() throws IOException {
    long stored = parseOctal(148, 8);
    long sum = 0;
    for (int i = 0; i < BLOCK; i++) {
      sum += (i >= 148 && i < 156) ? ' ' : (header[i] & 0xff);
    }
    if (sum != stored) {
      throw new IOException(
          "Corrupt tar header in " + shard + " (checksum " + stored + " != " + sum + ")");
    }
  }

  private String headerName() {
    String base = cString(header, 0, 100);
    boolean ustar = new String(header, 257, 5, StandardCharsets.US_ASCII).equals("ustar");
    String prefix = ustar ? cString(header, 345, 155) : "";
    return prefix.isEmpty() ? base : prefix + "/" + base;
  }

  private long parseOctal(int offset, int length) throws IOException {
    if ((header[offset] & 0x80) != 0) { // GNU base-256 for sizes >= 8 GiB
      long value = header[offset] & 0x7f;
      for (int i = 1; i < length; i++) {
        value = (value << 8) | (header[offset + i] & 0xff);
      }
      return value;
    }
    long value = 0;
    for (int i = offset; i < offset + length; i++) {
      byte b = header[i];
      if (b == 0 || b == ' ') {
        if (value > 0 || i > offset + length - 3) {
          break;
        }
        continue;
      }
      if (b < '0' || b > '7') {
        throw new IOException("Corrupt tar header in " + shard + ": non-octal numeric field");
      }
      value = value * 8 + (b - '0');
    }
    return value;
  }

  private byte[] readBody(long entrySize) throws IOException {
    if (entrySize > 1 << 20) {
      throw new IOException("Tar metadata entry of " + entrySize + " bytes in " + shard);
    }
    byte[] body = readFully((int) entrySize);
    skipBytes(padded(entrySize) - entrySize);
    return body;
  }

  private byte[] readFully(int n) throws IOException {
    byte[] bytes = in.readNBytes(n);
    if (bytes.length < n) {
      throw new EOFException(
          String.format(
              "Truncated tar entry %s in %s (%d of %d bytes)", name, shard, bytes.length, n));
    }
    return bytes;
  }

  private void skipPending() throws IOException {
    skipBytes(pendingSkip);
    pendingSkip = 0;
  }

  private void skipBytes(long n) throws IOException {
    long left = n;
    while (left > 0) {
      long skipped = in.skip(left);
      if (skipped <= 0) {
        if (in.read() < 0) {
          throw new EOFException("Truncated tar archive " + shard + " (entry " + name + ")");
        }
        skipped = 1;
      }
      left -= skipped;
    }
  }

  private static long padded(long size) {
    return (size + BLOCK - 1) / BLOCK * BLOCK;
  }

  private static String paxPath(byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8);
    for (String record : text.split("\n")) {
      int space = record.indexOf(' ');
      int eq = record.indexOf('=');
      if (space > 0 && eq > space && record.substring(space + 1, eq).equals("path")) {
        return record.substring(eq + 1);
      }
    }
    return null;
  }

  private static String cString(byte[] bytes) {
    return cString(bytes, 0, bytes.length);
  }

  private static String cString(byte[] bytes, int offset, int length) {
    int end = offset;
    while (end < offset + length && bytes[end] != 0) {
      end++;
    }
    return new String(bytes, offset, end - offset, StandardCharsets.UTF_8);
  }
}
