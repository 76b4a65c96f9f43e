package dev.spindle.spark.shard;

import java.io.EOFException;
import java.nio.ByteBuffer;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A Parquet {@link InputFile} over bytes in memory, for the fuzz target: the footer and pages are
 * read by parquet-mr exactly as from storage, without a file system in between. Immutable; each
 * stream it opens belongs to one thread.
 */
final class BytesInputFile implements InputFile {
  private final byte[] bytes;

  BytesInputFile(byte[] bytes) {
    this.bytes = bytes;
  }

  @Override
  public long getLength() {
    return bytes.length;
  }

  @Override
  public SeekableInputStream newStream() {
    return new SeekableInputStream() {
      private int pos;

      @Override
      public long getPos() {
        return pos;
      }

      @Override
      public void seek(long newPos) throws EOFException {
        if (newPos < 0 || newPos > bytes.length) {
          throw new EOFException("Seek to " + newPos + " of " + bytes.length + " bytes");
        }
        pos = (int) newPos;
      }

      @Override
      public int read() {
        return pos < bytes.length ? bytes[pos++] & 0xFF : -1;
      }

      @Override
      public int read(byte[] b, int off, int len) {
        if (pos >= bytes.length) {
          return len == 0 ? 0 : -1;
        }
        int n = Math.min(len, bytes.length - pos);
        System.arraycopy(bytes, pos, b, off, n);
        pos += n;
        return n;
      }

      @Override
      public void readFully(byte[] b) throws EOFException {
        readFully(b, 0, b.length);
      }

      @Override
      public void readFully(byte[] b, int off, int len) throws EOFException {
        if (len > bytes.length - pos) {
          throw new EOFException("Read of " + len + " bytes at " + pos + " of " + bytes.length);
        }
        read(b, off, len);
      }

      @Override
      public int read(ByteBuffer buf) {
        int n = Math.min(buf.remaining(), bytes.length - pos);
        if (n <= 0) {
          return buf.hasRemaining() ? -1 : 0;
        }
        buf.put(bytes, pos, n);
        pos += n;
        return n;
      }

      @Override
      public void readFully(ByteBuffer buf) throws EOFException {
        if (buf.remaining() > bytes.length - pos) {
          throw new EOFException(
              "Read of " + buf.remaining() + " bytes at " + pos + " of " + bytes.length);
        }
        read(buf);
      }
    };
  }
}
