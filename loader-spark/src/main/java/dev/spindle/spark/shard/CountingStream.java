package dev.spindle.spark.shard;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * A storage stream that counts into {@link IoCounters} what its reads take: the bytes, and a
 * request for the first read and for the first read after each skip (a seek, which a remote store
 * answers with a new ranged request). One thread; closes the stream it wraps.
 */
final class CountingStream extends FilterInputStream {
  private final IoCounters counters;
  private boolean fresh = true; // the next read starts a request

  CountingStream(InputStream in, IoCounters counters) {
    super(in);
    this.counters = counters;
  }

  @Override
  public int read() throws IOException {
    int b = in.read();
    took(b < 0 ? 0 : 1);
    return b;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    int n = in.read(b, off, len);
    took(Math.max(n, 0));
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    long skipped = in.skip(n);
    fresh |= skipped > 0;
    return skipped;
  }

  private void took(int n) {
    if (fresh) {
      counters.request(n);
      fresh = false;
    } else {
      counters.bytes(n);
    }
  }
}
