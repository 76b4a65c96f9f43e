package dev.spindle.spark.shard;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import org.apache.hadoop.fs.FSDataInputStream;

/**
 * A read-only {@link SeekableByteChannel} over a Hadoop file stream, so that Arrow's file reader
 * reads through any Hadoop FileSystem ({@code hdfs://}, {@code s3a://}, …): it seeks to the footer
 * and to each record batch it loads, and reads nothing else. Owns the stream; one thread.
 */
final class HadoopReadChannel implements SeekableByteChannel {
  private static final int CHUNK = 1 << 16;

  private final FSDataInputStream in;
  private final long size;
  private final byte[] chunk = new byte[CHUNK];
  private long position;
  private boolean open = true;

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
      dst.put(chunk, 0, n);
      done += n;
    }
    position += done;
    return done;
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
