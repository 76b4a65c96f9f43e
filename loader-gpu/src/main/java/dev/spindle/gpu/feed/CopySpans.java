package dev.spindle.gpu.feed;

/**
 * A process-wide hook for tracing the feeders' host-to-device copies: off (the default) until
 * {@link #install} sets a {@link Tracer}, which every feeder's copy thread then calls once per
 * batch it retires. When off, a copy thread pays one volatile read per batch. {@link #install} and
 * {@link #uninstall} from the trace's owner thread; {@link Tracer#copied} runs on copy threads.
 */
public final class CopySpans {
  /** Receives one call per retired batch, on the feeder's copy thread. */
  @FunctionalInterface
  public interface Tracer {
    /**
     * Batch in ring slot {@code slot} of {@code device}: {@code bytes} copied (images and labels),
     * submitted at {@code submitNanos}, seen complete at {@code completeNanos} ({@link
     * System#nanoTime()}); {@code zeroCopy} when read in place from the producer's pinned buffer.
     */
    void copied(
        String device,
        int slot,
        long bytes,
        long submitNanos,
        long completeNanos,
        boolean zeroCopy);
  }

  static volatile Tracer tracer;

  private CopySpans() {}

  /** Installs {@code t}; the copy threads call it from their next retired batch on. */
  public static synchronized void install(Tracer t) {
    tracer = t;
  }

  /** Removes {@code t} if it is the installed tracer; copies in flight may still reach it once. */
  public static synchronized void uninstall(Tracer t) {
    if (tracer == t) {
      tracer = null;
    }
  }
}
