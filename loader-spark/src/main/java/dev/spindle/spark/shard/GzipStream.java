package dev.spindle.spark.shard;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * The decompressed bytes of a gzip-compressed tar shard ({@code .tar.gz}, {@code .tgz}), for {@link
 * TarSampleCursor}. A stream that is not gzip, is corrupt or ends early throws {@link
 * TarFormatException}: it is the shard's damage (the samples before it are used, the rest is its
 * {@code (rest of shard)} sample), never a storage failure; errors of the storage underneath pass
 * through unchanged and fail the task. The gzip header is read on the first read, so opening never
 * fails for the content's sake. Concatenated gzip members are read as one stream. One thread;
 * closing closes the compressed stream.
 */
final class GzipStream extends InputStream {
  private static final int BUFFER = 1 << 16;

  private final InputStream compressed;
  private final String shard;
  private GZIPInputStream in;
  private byte[] sink; // skipped bytes are decompressed into it
  private long produced; // decompressed bytes handed out, for messages

  private GzipStream(InputStream compressed, String shard) {
    this.compressed = compressed;
    this.shard = shard;
  }

  /** True for the names of gzip-compressed tar shards: {@code .tar.gz} and {@code .tgz}. */
  static boolean isGzipTar(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    return lower.endsWith(".tar.gz") || lower.endsWith(".tgz");
  }

  /** {@code raw} itself for a plain tar, its decompressed bytes for a gzip-compressed one. */
  static InputStream forShard(InputStream raw, String uri) {
    return isGzipTar(uri) ? new GzipStream(raw, uri) : raw;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    try {
      if (in == null) {
        in = new GZIPInputStream(compressed, BUFFER);
      }
      int n = in.read(b, off, len);
      produced += Math.max(n, 0);
      return n;
    } catch (ZipException | EOFException e) {
      String why = e.getMessage() != null ? e.getMessage() : "it ends early";
      throw new TarFormatException(
          "the gzip stream of "
              + shard
              + " is damaged after "
              + produced
              + " decompressed bytes: "
              + why);
    }
  }

  @Override
  public long skip(long n) throws IOException {
    if (sink == null) {
      sink = new byte[BUFFER];
    }
    long left = n;
    while (left > 0) {
      int got = read(sink, 0, (int) Math.min(sink.length, left));
      if (got < 0) {
        break;
      }
      left -= got;
    }
    return n - left;
  }

  @Override
  public void close() throws IOException {
    compressed.close();
  }
}
