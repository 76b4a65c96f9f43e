package dev.spindle.spark.feed;

import org.apache.arrow.memory.ArrowBuf;

/**
 * A row after decoding: its pixels (owned by this object, from the task's allocator) or why it
 * could not be decoded. Closing releases the pixels; idempotent. Made on a decode thread, then
 * owned by the task thread (or the pipeline, which closes what it still holds when stopped).
 */
final class Decoded implements AutoCloseable {
  private final Row row;
  private ArrowBuf pixels;
  private final String problem;

  private Decoded(Row row, ArrowBuf pixels, String problem) {
    this.row = row;
    this.pixels = pixels;
    this.problem = problem;
  }

  static Decoded ok(Row row, ArrowBuf pixels) {
    return new Decoded(row, pixels, null);
  }

  static Decoded bad(Row row, String problem) {
    return new Decoded(row, null, problem);
  }

  Row row() {
    return row;
  }

  /** The pixels, or null when {@link #problem()} is set. */
  ArrowBuf pixels() {
    return pixels;
  }

  String problem() {
    return problem;
  }

  long bytes() {
    return pixels == null ? 0 : pixels.capacity();
  }

  @Override
  public synchronized void close() {
    if (pixels != null) {
      pixels.close();
      pixels = null;
    }
  }
}
