package dev.spindle.spark.sink;

import java.io.IOException;
import java.io.OutputStream;
import java.util.zip.CRC32C;
import org.apache.parquet.io.PositionOutputStream;

/**
 * Passes every byte through to the stream it wraps (and owns) while keeping the CRC-32C of all of
 * them and of the current segment ({@link #startSegment()}): the part file's checksum and its
 * record batches' are computed as the file is written, never by reading it back. A {@link
 * PositionOutputStream}, so that parquet-mr writes through it too. One thread.
 */
final class CrcOutputStream extends PositionOutputStream {
  private final OutputStream out;
  private final CRC32C file = new CRC32C();
  private final CRC32C segment = new CRC32C();
  private long position;
  private long segmentStart;

  CrcOutputStream(OutputStream out) {
    this.out = out;
  }

  @Override
  public void write(int b) throws IOException {
    out.write(b);
    file.update(b);
    segment.update(b);
    position++;
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    out.write(b, off, len);
    file.update(b, off, len);
    segment.update(b, off, len);
    position += len;
  }

  @Override
  public long getPos() {
    return position;
  }

  /** Starts a segment at the current position. */
  void startSegment() {
    segment.reset();
    segmentStart = position;
  }

  /** Where the current segment started. */
  long segmentStart() {
    return segmentStart;
  }

  /** The CRC-32C of the bytes written since {@link #startSegment()}. */
  long segmentCrc() {
    return segment.getValue();
  }

  /** The CRC-32C of every byte written. */
  long fileCrc() {
    return file.getValue();
  }

  @Override
  public void flush() throws IOException {
    out.flush();
  }

  @Override
  public void close() throws IOException {
    out.close();
  }
}
