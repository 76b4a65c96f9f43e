package dev.spindle.spark.shard;

import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * The decompressed bytes of a compressed tar shard ({@link TarCompression}: gzip, xz, bzip2,
 * Zstandard), for {@link TarSampleCursor}. A stream that is not of its kind, is corrupt, ends early
 * or declares more memory than {@link TarCompression#XZ_MEMORY_LIMIT_KB} throws {@link
 * TarFormatException}: it is the shard's damage (the samples before it are used, the rest is its
 * {@code (rest of shard)} sample), never a storage failure. Errors of the storage underneath are
 * told apart by where they were thrown (the compressed stream is watched) and pass through
 * unchanged, so they fail the task. The header is read on the first read, so opening never fails
 * for the content's sake.
 *
 * <p>The decompressor is always asked for {@value #CHUNK} bytes into a buffer of this stream's own,
 * whatever its reader asks for: a decompressor that fails part-way through a read loses what that
 * read had decoded, so with reads of the caller's sizes, counting a shard (which skips content) and
 * reading it (which reads it) would see its damage at different points. Asked alike, they see the
 * same bytes before it. One thread; closing closes the decompressor (it holds native memory: zlib's
 * inflater, zstd's window) and the compressed stream.
 */
final class DecompressedStream extends InputStream {
  /** What the decompressor is asked for at a time; what a failing read can lose. */
  static final int CHUNK = 8192;

  private final Watched compressed;
  private final String shard;
  private final TarCompression compression;
  private final byte[] chunk = new byte[CHUNK];
  private InputStream in;
  private int pos;
  private int limit; // chunk[pos, limit) is decompressed and not handed out yet
  private boolean ended;
  private long produced; // decompressed bytes handed out, for messages

  DecompressedStream(InputStream compressed, String shard, TarCompression compression) {
    this.compressed = new Watched(compressed);
    this.shard = shard;
    this.compression = compression;
  }

  @Override
  public int read() throws IOException {
    if (!fill()) {
      return -1;
    }
    produced++;
    return chunk[pos++] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    if (!fill()) {
      return -1;
    }
    int n = Math.min(len, limit - pos);
    System.arraycopy(chunk, pos, b, off, n);
    pos += n;
    produced += n;
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    long left = n;
    while (left > 0 && fill()) {
      int step = (int) Math.min(left, limit - pos);
      pos += step;
      produced += step;
      left -= step;
    }
    return n - left;
  }

  /** True when bytes are buffered, decompressing the next chunk if none are; false at the end. */
  private boolean fill() throws IOException {
    while (pos == limit) {
      if (ended) {
        return false;
      }
      int n;
      try {
        if (in == null) {
          in = compression.decompressor(compressed);
        }
        n = in.read(chunk, 0, CHUNK);
      } catch (IOException e) {
        throw damage(e);
      }
      if (n < 0) {
        ended = true;
        return false;
      }
      pos = 0;
      limit = n;
    }
    return true;
  }

  private IOException damage(IOException e) {
    if (compressed.failure != null) {
      return e; // the storage failed, not the bytes: the task fails and is retried
    }
    String why =
        e.getMessage() != null
            ? e.getMessage()
            : e instanceof EOFException ? "it ends early" : e.toString();
    return new TarFormatException(
        "the "
            + compression.codec()
            + " stream of "
            + shard
            + " is damaged after "
            + produced
            + " decompressed bytes: "
            + why);
  }

  @Override
  public void close() throws IOException {
    try (InputStream c = compressed) {
      if (in != null && in != compressed) {
        in.close(); // frees the native state now, not when a finalizer or cleaner gets to it
      }
    }
  }

  /** The compressed stream, remembering whether it (the storage) failed. */
  private static final class Watched extends FilterInputStream {
    private IOException failure;

    Watched(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      try {
        return super.read();
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      try {
        return super.read(b, off, len);
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }

    @Override
    public long skip(long n) throws IOException {
      try {
        return super.skip(n);
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }

    @Override
    public int available() throws IOException {
      try {
        return super.available();
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }
  }
}
