package dev.spindle.spark.shard;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Streams the regular-file entries of a POSIX tar archive (ustar, GNU long names, pax path and size
 * records). One thread; not thread-safe. Does not close the stream it reads.
 *
 * <p>Call {@link #next()} to move to the next regular file, then either {@link #readContent()} or
 * nothing (the content is skipped on the following {@code next()}). Every header field used is
 * checked: a wrong checksum, a number that is not octal, negative or over {@link #MAX_ENTRY_BYTES},
 * a malformed pax record, or an archive that ends inside a header or an entry throws {@link
 * TarFormatException} naming the entry, the header's byte offset and the shard; the reader must not
 * be used after that. A skip is checked by reading its last byte, so a truncation is found at the
 * same entry whether or not the content was read (a FileInputStream skips past the end without
 * saying so). Blocks of zeros (end-of-archive blocks, record padding) are passed over wherever they
 * are, so archives written one after the other into one file read as one ({@link #readHeader}); the
 * archive ends where the stream does.
 */
final class TarEntryReader {
  /** Larger sizes are a corrupt header: no shard member is 1 TiB, and offsets cannot overflow. */
  static final long MAX_ENTRY_BYTES = 1L << 40;

  private static final int BLOCK = 512;
  private static final int MAX_META_BYTES = 1 << 20;
  private static final int EXACT_READ_BYTES = 16 << 20;

  private final InputStream in;
  private final String shard;
  private final byte[] header = new byte[BLOCK];
  private long offset; // bytes consumed from the stream
  private long headerOffset; // where the header being handled starts
  private byte[] headerName = new byte[0]; // the name of the header being handled, for messages
  private long pendingSkip;
  private long start; // where the current entry's first header block (pax, long name) starts
  private long end; // where the current entry's padded content ends
  private byte[] name;
  private long size;
  private boolean contentRead;

  TarEntryReader(InputStream in, String shard) {
    this(in, shard, 0);
  }

  /**
   * A reader of a stream whose first byte is byte {@code startOffset} of the archive (a range of
   * it), so offsets and messages name places in the whole archive.
   */
  TarEntryReader(InputStream in, String shard, long startOffset) {
    this.in = in;
    this.shard = shard;
    this.offset = startOffset;
  }

  /** Moves to the next regular file; returns false at the end of the archive. */
  boolean next() throws IOException {
    skip(pendingSkip);
    pendingSkip = 0;
    byte[] longName = null;
    long paxSize = -1;
    long chainStart = -1; // the first header of the chain the next entry's own header ends
    while (readHeader()) {
      chainStart = chainStart < 0 ? headerOffset : chainStart;
      byte type = header[156];
      long headerSize = sizeField();
      if (type == 'L') { // GNU long name: the content is the next entry's name
        longName = cString(readMeta(headerSize, "GNU long name"), 0, (int) headerSize);
      } else if (type == 'x') { // pax extended header: path and size of the next entry
        PaxHeader pax = pax(readMeta(headerSize, "pax header"));
        longName = pax.path() != null ? pax.path() : longName;
        paxSize = pax.size() >= 0 ? pax.size() : paxSize;
      } else if (type == 'K') { // GNU long link name: of no use here
        skip(padded(headerSize));
      } else {
        long dataSize = paxSize >= 0 ? paxSize : headerSize;
        if (type == '0' || type == '\0' || type == '7') {
          name = longName != null ? longName : headerName;
          headerName = name;
          size = dataSize;
          contentRead = false;
          pendingSkip = padded(size);
          start = chainStart;
          end = offset + pendingSkip;
          return true;
        }
        skip(padded(dataSize)); // directories, links, global pax headers: no sample content
        longName = null;
        paxSize = -1;
        chainStart = -1;
      }
    }
    return false;
  }

  /** The current entry's path inside the archive, as stored. */
  byte[] rawName() {
    return name;
  }

  /** The current entry's path, readable ({@link EscapedUtf8}). */
  String name() {
    return EscapedUtf8.text(name);
  }

  /**
   * Where the current entry starts in the stream: its first header block, counting the pax ({@code
   * x}) and GNU long-name ({@code L}, {@code K}) headers that belong to it, so that reading from
   * here yields the same entry.
   */
  long start() {
    return start;
  }

  /** Where the current entry's content, padded to whole blocks, ends in the stream. */
  long end() {
    return end;
  }

  /** The current entry's size in bytes, at most {@link #MAX_ENTRY_BYTES}. */
  long size() {
    return size;
  }

  /**
   * Reads the current entry's content; the caller checks {@link #size()} against its limit first.
   *
   * @throws TarFormatException when the archive ends inside the content
   */
  byte[] readContent() throws IOException {
    if (contentRead || size > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException(
          "Cannot read entry "
              + name()
              + " of "
              + shard
              + " ("
              + size
              + " bytes, read before: "
              + contentRead
              + ")");
    }
    byte[] content = readFully((int) size);
    pendingSkip -= size;
    contentRead = true;
    return content;
  }

  /**
   * Reads the next header, passing over blocks of zeros: they end an archive (and pad its last
   * record), but another archive may follow them ({@code cat a.tar b.tar > c.tar}), which is read
   * on as GNU tar's {@code --ignore-zeros} reads it. So nothing after an end-of-archive block is
   * dropped unseen: it is read, or it is damage; only zeros may end the stream.
   */
  private boolean readHeader() throws IOException {
    while (true) {
      headerOffset = offset;
      headerName = new byte[0];
      int n = in.readNBytes(header, 0, BLOCK);
      offset += n;
      if (isZeroBlock(n)) {
        if (n < BLOCK) {
          return false; // the end; archives without end-of-archive blocks exist in the wild
        }
        continue;
      }
      if (n < BLOCK) {
        throw damage("the archive ends inside a header (" + n + " of 512 bytes)");
      }
      verifyChecksum();
      headerName = headerNameField();
      return true;
    }
  }

  private boolean isZeroBlock(int n) {
    for (int i = 0; i < n; i++) {
      if (header[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /** The stored sum counts bytes unsigned (POSIX) or signed (old writers); GNU tar takes both. */
  private void verifyChecksum() throws TarFormatException {
    long stored = number(148, 8, "checksum field");
    long unsigned = 0;
    long signed = 0;
    for (int i = 0; i < BLOCK; i++) {
      byte b = (i >= 148 && i < 156) ? (byte) ' ' : header[i];
      unsigned += b & 0xff;
      signed += b;
    }
    if (stored != unsigned && stored != signed) {
      throw damage("checksum " + stored + " != " + unsigned + " (a corrupt header, or not a tar)");
    }
  }

  private byte[] headerNameField() {
    byte[] base = cString(header, 0, 100);
    boolean ustar =
        header[257] == 'u'
            && header[258] == 's'
            && header[259] == 't'
            && header[260] == 'a'
            && header[261] == 'r';
    byte[] prefix = ustar ? cString(header, 345, 155) : new byte[0];
    if (prefix.length == 0) {
      return base;
    }
    byte[] full = Arrays.copyOf(prefix, prefix.length + 1 + base.length);
    full[prefix.length] = '/';
    System.arraycopy(base, 0, full, prefix.length + 1, base.length);
    return full;
  }

  private long sizeField() throws TarFormatException {
    long value = number(124, 12, "size field");
    if (value > MAX_ENTRY_BYTES) {
      throw damage(
          "size field is "
              + value
              + " bytes, over the limit of "
              + MAX_ENTRY_BYTES
              + " bytes for a tar member");
    }
    return value;
  }

  /** A numeric field: octal ASCII (NUL- or space-terminated), or GNU base-256 (lead 0x80). */
  private long number(int at, int length, String field) throws TarFormatException {
    int lead = header[at] & 0xff;
    if (lead >= 0x80) {
      return base256(at, length, field);
    }
    int end = at;
    while (end < at + length && header[end] != 0) {
      end++;
    }
    int from = at;
    while (from < end && header[from] == ' ') {
      from++;
    }
    while (end > from && header[end - 1] == ' ') {
      end--;
    }
    long value = 0;
    for (int i = from; i < end; i++) {
      if (header[i] < '0' || header[i] > '7') {
        throw damage(
            field + " is not an octal number: '" + EscapedUtf8.text(header, from, end) + "'");
      }
      value = value * 8 + (header[i] - '0');
    }
    return value;
  }

  /** Two's complement after the marker bit: bit 6 of the lead byte is the sign. */
  private long base256(int at, int length, String field) throws TarFormatException {
    int lead = header[at] & 0xff;
    if ((lead & 0x40) != 0) {
      throw damage(field + " is negative (base-256)");
    }
    long value = lead & 0x3f;
    for (int i = at + 1; i < at + length; i++) {
      if (value > (Long.MAX_VALUE >>> 8)) {
        throw damage(field + " is over 2^63 (base-256)");
      }
      value = (value << 8) | (header[i] & 0xff);
    }
    return value;
  }

  private byte[] readMeta(long length, String what) throws IOException {
    if (length > MAX_META_BYTES) {
      throw damage(what + " of " + length + " bytes, over the limit of " + MAX_META_BYTES);
    }
    byte[] body = readFully((int) length);
    skip(padded(length) - length);
    return body;
  }

  private PaxHeader pax(byte[] body) throws TarFormatException {
    try {
      return PaxHeader.parse(body, MAX_ENTRY_BYTES);
    } catch (IllegalArgumentException e) {
      throw damage(e.getMessage());
    }
  }

  /**
   * The next {@code n} bytes. Up to {@link #EXACT_READ_BYTES} they are read into one array of that
   * size ({@link InputStream#readNBytes(int)} reads in 8 KiB pieces and joins them: a second copy
   * and twice the garbage for every sample); a larger size, which a damaged header may claim, is
   * read in pieces, so a short stream fails before memory is taken for the size claimed.
   */
  private byte[] readFully(int n) throws IOException {
    byte[] bytes;
    int read;
    if (n > EXACT_READ_BYTES) {
      bytes = in.readNBytes(n);
      read = bytes.length;
    } else {
      bytes = new byte[n];
      read = in.readNBytes(bytes, 0, n);
    }
    offset += read;
    if (read < n) {
      throw truncated();
    }
    return bytes;
  }

  private void skip(long n) throws IOException {
    if (n <= 0) {
      return;
    }
    long left = n - 1;
    while (left > 0) {
      long skipped = in.skip(left);
      if (skipped <= 0) {
        if (in.read() < 0) {
          throw truncated();
        }
        skipped = 1;
      }
      left -= skipped;
    }
    if (in.read() < 0) { // the last byte proves every skipped byte was there
      throw truncated();
    }
    offset += n;
  }

  private TarFormatException truncated() {
    return damage("the archive ends inside this entry's content");
  }

  private TarFormatException damage(String what) {
    String entry = headerName.length == 0 ? "" : "entry '" + EscapedUtf8.text(headerName) + "': ";
    return new TarFormatException(
        entry + what + " (tar header at byte " + headerOffset + " of " + shard + ")");
  }

  private static long padded(long size) {
    return (size + BLOCK - 1) / BLOCK * BLOCK;
  }

  private static byte[] cString(byte[] bytes, int offset, int length) {
    int end = offset;
    while (end < offset + length && bytes[end] != 0) {
      end++;
    }
    return Arrays.copyOfRange(bytes, offset, end);
  }
}
