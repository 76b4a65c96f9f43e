package dev.spindle.spark.pipeline;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The switch of this JVM's trace: off (the default) until {@link #start} installs a {@link
 * TraceWriter}, which stages then give a span per timed item. When off, a stage pays one volatile
 * read per item and allocates nothing. {@link #start} and {@link #stop} from any one owner thread
 * (the executor plugin); stages read {@link #writer} from any thread.
 */
public final class Trace {
  /** The installed writer, or null when tracing is off. */
  static volatile TraceWriter writer;

  private Trace() {}

  /**
   * Starts writing this JVM's trace to {@code file} (Chrome trace-event JSON), keeping at most
   * about {@code maxSpans} item spans (sampled ever more sparsely as the bound nears).
   *
   * @throws IllegalStateException when a trace is already being written
   * @throws IOException when {@code file} cannot be created
   */
  public static synchronized void start(Path file, long maxSpans) throws IOException {
    if (writer != null) {
      throw new IllegalStateException(
          "A trace is already being written to "
              + writer.file()
              + "; cannot also trace to "
              + file);
    }
    writer = new TraceWriter(file, maxSpans);
  }

  /**
   * A feeder's copy of one batch (see {@link TraceWriter#copySpan}), on the copy thread; nothing
   * when tracing is off.
   */
  public static void copy(
      String device, int slot, long bytes, long startNanos, long endNanos, boolean zeroCopy) {
    TraceWriter w = writer;
    if (w != null) {
      w.copySpan(device, slot, bytes, startNanos, endNanos, zeroCopy);
    }
  }

  /** Stops tracing and completes the file; nothing when no trace runs. */
  public static synchronized void stop() throws IOException {
    TraceWriter w = writer;
    writer = null;
    if (w != null) {
      w.close();
    }
  }
}
