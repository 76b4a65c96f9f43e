package dev.spindle.spark.samples;

import org.apache.arrow.memory.ArrowBuf;

/**
 * One sample after the path's decode stage: its decoded pixels (owned by this object, from the
 * task's allocator), or, when the path passes encoded samples through, nothing but the sample
 * itself; or why it could not be used (kept in place only when the path keeps bad samples). Closing
 * releases the pixels; idempotent. Made on a decode thread, then owned by the consumer (or by the
 * pipeline, which closes what it still holds when stopped).
 *
 * @param <T> the item the source produced
 */
public final class Decoded<T extends IndexedSample> implements AutoCloseable {
  private final T item;
  private ArrowBuf pixels;
  private final String problem;
  private final boolean placed;

  private Decoded(T item, ArrowBuf pixels, String problem, boolean placed) {
    this.item = item;
    this.pixels = pixels;
    this.problem = problem;
    this.placed = placed;
  }

  private Decoded(T item, ArrowBuf pixels, String problem) {
    this(item, pixels, problem, false);
  }

  /**
   * A sample whose pixels were written into its row ({@link IndexedSample#target()}): kept as
   * {@link IndexedSample#withoutImage}, its encoded bytes no longer needed.
   */
  @SuppressWarnings("unchecked") // checked: withoutImage() must keep the item's class
  static <T extends IndexedSample> Decoded<T> placed(T item) {
    IndexedSample light = item.withoutImage();
    if (light.getClass() != item.getClass()) {
      throw new IllegalStateException(
          item.getClass().getName() + ".withoutImage() returned a " + light.getClass().getName());
    }
    return new Decoded<>((T) light, null, null, true);
  }

  static <T extends IndexedSample> Decoded<T> ok(T item, ArrowBuf pixels) {
    return new Decoded<>(item, pixels, null);
  }

  static <T extends IndexedSample> Decoded<T> bad(T item, String problem) {
    return new Decoded<>(item, null, problem);
  }

  public T item() {
    return item;
  }

  /** The decoded pixels, or null (a bad sample, or a path that does not decode). */
  public ArrowBuf pixels() {
    return pixels;
  }

  /** True when the pixels were written into the item's row target, not into {@link #pixels()}. */
  public boolean placed() {
    return placed;
  }

  /** Why the sample cannot be used, or null. */
  public String problem() {
    return problem;
  }

  long bytes() {
    if (placed) {
      return 0; // held by the batch it was written into, which bounds it
    }
    if (pixels != null) {
      return pixels.capacity();
    }
    byte[] image = item.sample().image();
    return problem != null || image == null ? 0 : image.length;
  }

  @Override
  public synchronized void close() {
    if (pixels != null) {
      pixels.close();
      pixels = null;
    }
  }
}
