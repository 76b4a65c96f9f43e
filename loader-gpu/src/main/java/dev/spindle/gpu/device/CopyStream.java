package dev.spindle.gpu.device;

/**
 * An ordered queue of work on one device (a non-blocking CUDA stream, or immediate execution on the
 * host device) with a fixed set of reusable completion events.
 *
 * <p>Threads: confined to the thread that opened it. Work is asynchronous: the source of a copy
 * must stay untouched until an event recorded after it reports completion. Owner: the opener;
 * {@link #close()} waits for outstanding work, then frees the events and the stream.
 */
public interface CopyStream extends AutoCloseable {

  /** Enqueues a host-to-device copy of {@code bytes} bytes. */
  void copyToDevice(HostBuffer src, long srcOffset, DeviceBuffer dst, long dstOffset, long bytes);

  /**
   * Enqueues normalisation of {@code rows} uint8 HWC images at {@code src + srcOffset} into CHW
   * values of {@code spec}'s type at {@code dst + dstOffset}, using the scale and bias table at
   * {@code table + tableOffset} (see {@link NormalizeSpec#table()}).
   */
  void normalize(
      DeviceBuffer src,
      long srcOffset,
      DeviceBuffer dst,
      long dstOffset,
      DeviceBuffer table,
      long tableOffset,
      int rows,
      NormalizeSpec spec);

  /** Records event {@code event} after all work enqueued so far. */
  void record(int event);

  /** True once all work before the last {@link #record} of {@code event} has completed. */
  boolean isComplete(int event);

  /** Blocks until all enqueued work has completed. */
  void synchronize();

  @Override
  void close();
}
