package dev.spindle.spark.progress;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Stderr with one live line at its bottom: whatever else is written (Spark's log lines, a stack
 * trace) first erases the live line, and the line is drawn again only at the start of a line, so
 * neither garbles the other. Any thread; every method holds the instance's lock.
 */
final class LiveStderr extends OutputStream {
  private static final byte[] ERASE = "\r\u001b[K".getBytes(StandardCharsets.US_ASCII);

  private final OutputStream out;
  private final int columns;
  private boolean shown;
  private boolean atLineStart = true;

  /** {@code columns}: the terminal's width, or 0 when unknown (the line is not cut). */
  LiveStderr(OutputStream out, int columns) {
    this.out = out;
    this.columns = columns;
  }

  @Override
  public synchronized void write(int b) throws IOException {
    erase();
    out.write(b);
    atLineStart = b == '\n';
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return;
    }
    erase();
    out.write(b, off, len);
    atLineStart = b[off + len - 1] == '\n';
  }

  @Override
  public synchronized void flush() throws IOException {
    out.flush();
  }

  /** Draws {@code line} in place of the former one, unless another writer is mid-line. */
  synchronized void draw(String line) throws IOException {
    if (!atLineStart) {
      return;
    }
    String cut = columns > 1 && line.length() >= columns ? line.substring(0, columns - 1) : line;
    out.write(("\r" + cut + "\u001b[K").getBytes(StandardCharsets.UTF_8));
    out.flush();
    shown = true;
  }

  /** Erases the live line, if shown. */
  synchronized void erase() throws IOException {
    if (shown) {
      out.write(ERASE);
      out.flush();
      shown = false;
    }
  }
}
