package dev.spindle.spark.shard;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import org.apache.hadoop.fs.FSInputStream;

/**
 * A shard's local copy in the cache, read as a Hadoop stream (seekable, positioned reads), so a
 * reader handed it instead of the storage's stream needs no other change. Positioned reads use the
 * channel's own positioned reads, which neither move the stream nor need a lock: several threads
 * may issue them at once (concurrent ranged reads); the sequential read and seek are one thread's.
 * Every byte read is counted as served from the cache. {@link #close()} releases the entry's pin
 * (so eviction may delete it) and is safe to call twice.
 */
final class CachedFileStream extends FSInputStream {
  private final FileChannel channel;
  private final long size;
  private final CacheTally tally;
  private final Runnable release;
  private long position;
  private boolean closed;

  CachedFileStream(FileChannel channel, long size, CacheTally tally, Runnable release) {
    this.channel = channel;
    this.size = size;
    this.tally = tally;
    this.release = release;
  }

  @Override
  public void seek(long pos) throws IOException {
    if (pos < 0 || pos > size) {
      throw new EOFException("Cannot seek to " + pos + " of a " + size + "-byte cached shard");
    }
    position = pos;
  }

  @Override
  public long getPos() {
    return position;
  }

  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public int available() {
    return (int) Math.min(Integer.MAX_VALUE, size - position);
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    int n = read(position, b, off, len);
    if (n > 0) {
      position += n;
    }
    return n;
  }

  @Override
  public int read(long pos, byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    if (pos >= size) {
      return -1;
    }
    int n = channel.read(ByteBuffer.wrap(b, off, (int) Math.min(len, size - pos)), pos);
    if (n > 0) {
      tally.served(n);
    }
    return n;
  }

  @Override
  public synchronized void close() throws IOException {
    if (!closed) {
      closed = true;
      try {
        channel.close();
      } finally {
        release.run();
      }
    }
  }
}
