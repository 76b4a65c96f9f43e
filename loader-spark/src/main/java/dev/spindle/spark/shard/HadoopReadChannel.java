package dev.spindle.spark.shard;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import java.util.zip.CRC32C;
import org.apache.hadoop.fs.FSDataInputStream;

/**
 * A read-only {@link SeekableByteChannel} over a Hadoop file stream, so that Arrow's file reader
 * reads through any Hadoop FileSystem ({@code hdfs://}, {@code s3a://}, …): it seeks to the footer
 * and to each record batch it loads, and reads nothing else; on request it checksums what it reads
 * ({@link #startTap()}), so a record batch is verified without being read twice. Owns the stream;
 * one thread.
 */
final class HadoopReadChannel implements SeekableByteChannel {
  private static final int CHUNK = 1 << 16;

  private final FSDataInputStream in;
  private final long size;
  private final byte[] chunk = new byte[CHUNK];
  private long position;
  private boolean open = true;
  private CRC32C tap; // null when not tapping
  private long tapFrom;
  private long tapBytes;
  private boolean tapRun;

  HadoopReadChannel(FSDataInputStream in, long size) {
    this.in = in;
    this.size = size;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    if (position >= size) {
      return -1;
    }
    int wanted = (int) Math.min(dst.remaining(), size - position);
    if (in.getPos() != position) {
      in.seek(position);
    }
    int done = 0;
    while (done < wanted) {
      int n = in.read(chunk, 0, Math.min(CHUNK, wanted - done));
      if (n < 0) {
        throw new EOFException("The file ended at byte " + (position + done) + " of " + size);
      }
      if (tap != null) {
        checksum(position + done, n);
      }
      dst.put(chunk, 0, n);
      done += n;
    }
    position += done;
    return done;
  }

  /**
   * From now until {@link #endTap(long, long)}: the CRC-32C of what is read, which must be one run
   * of bytes (Arrow's reader reads a record batch's block with one positioned read).
   */
  void startTap() {
    tap = new CRC32C();
    tapFrom = -1;
    tapBytes = 0;
    tapRun = true;
  }

  /**
   * The CRC-32C of the bytes read since {@link #startTap()} when they were exactly {@code length}
   * bytes from {@code from} on, read in order; else -1. Ends the tap.
   */
  long endTap(long from, long length) {
    CRC32C crc = tap;
    tap = null;
    boolean exact = tapRun && tapFrom == from && tapBytes == length;
    return crc != null && exact ? crc.getValue() : -1;
  }

  private void checksum(long at, int n) {
    if (tapFrom < 0) {
      tapFrom = at;
    } else if (tapFrom + tapBytes != at) {
      tapRun = false;
    }
    tap.update(chunk, 0, n);
    tapBytes += n;
  }

  @Override
  public long position() {
    return position;
  }

  @Override
  public SeekableByteChannel position(long newPosition) {
    if (newPosition < 0) {
      throw new IllegalArgumentException("Invalid position: " + newPosition);
    }
    position = newPosition;
    return this;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public int write(ByteBuffer src) {
    throw new NonWritableChannelException();
  }

  @Override
  public SeekableByteChannel truncate(long size) {
    throw new NonWritableChannelException();
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void close() throws IOException {
    if (open) {
      open = false;
      in.close();
    }
  }
}
