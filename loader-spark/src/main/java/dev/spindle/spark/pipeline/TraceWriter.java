package dev.spindle.spark.pipeline;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Writes one JVM's trace as Chrome trace-event JSON ({@code {"traceEvents":[...]}}, opened by
 * Perfetto and {@code chrome://tracing}): an {@code X} span per item per stage on the track of the
 * thread that did the work ({@code M thread_name} names each track), a {@code feeder copy} span per
 * batch a feeder copies to its device (on its copy thread), and every 50 ms a {@code C} counter of
 * each running stage's output queue (items waiting). Spans are kept until half of {@code maxSpans}
 * are written, then one in 2, one in 4 from three quarters, and so on, so the file stays near
 * {@code maxSpans} events (about 130 bytes each). Any thread may add spans; the owner ({@link
 * Trace}) closes it.
 */
final class TraceWriter implements AutoCloseable {
  private static final int PID = (int) ProcessHandle.current().pid();
  private final Path file;
  private final long maxSpans;
  private final long originNanos = System.nanoTime();
  private final JsonGenerator json;
  private final Set<Long> named = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService counters;
  private long offered;
  private long written;
  private boolean closed;

  TraceWriter(Path file, long maxSpans) throws IOException {
    this.file = file;
    this.maxSpans = Math.max(1, maxSpans);
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    json =
        new JsonFactory()
            .createGenerator(new BufferedOutputStream(Files.newOutputStream(file), 1 << 16));
    json.writeStartObject();
    json.writeStringField("displayTimeUnit", "ms");
    json.writeArrayFieldStart("traceEvents");
    counters =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "spindle-trace-counters");
              t.setDaemon(true);
              return t;
            });
    counters.scheduleAtFixedRate(this::queues, 0, 50, TimeUnit.MILLISECONDS);
  }

  /** Spans written so far. */
  synchronized long written() {
    return written;
  }

  Path file() {
    return file;
  }

  /** A span of stage {@code stage} on the calling thread from {@code start} to {@code end}. */
  void span(String stage, long startNanos, long endNanos) {
    complete(stage, "stage", startNanos, endNanos, true, null);
  }

  /**
   * A feeder's host-to-device copy of one batch, on the calling (copy) thread: a {@code feeder
   * copy} span with the device, ring slot, bytes and whether it was zero copy. Copies are one per
   * batch, so they are all kept (they count towards the bound).
   */
  void copySpan(
      String device, int slot, long bytes, long startNanos, long endNanos, boolean zeroCopy) {
    complete(
        "feeder copy",
        "feeder",
        startNanos,
        endNanos,
        false,
        json -> {
          json.writeStringField("device", device);
          json.writeNumberField("slot", slot);
          json.writeNumberField("bytes", bytes);
          json.writeBooleanField("zero_copy", zeroCopy);
        });
  }

  /** Writes a span's {@code args} object. */
  @FunctionalInterface
  private interface Args {
    void write(JsonGenerator json) throws IOException;
  }

  /**
   * An {@code X} (complete) event on the calling thread's track, naming the track first; {@code
   * sample}: subject to {@link #sampled()}; {@code args}: null for none.
   */
  private void complete(
      String name, String category, long startNanos, long endNanos, boolean sample, Args args) {
    Thread t = Thread.currentThread();
    @SuppressWarnings("deprecation") // Thread.threadId() is Java 19+
    long tid = t.getId();
    boolean fresh = named.add(tid);
    synchronized (this) {
      if (closed || (sample && !sampled())) {
        return;
      }
      try {
        if (fresh) {
          meta(tid, t.getName());
        }
        json.writeStartObject();
        json.writeStringField("name", name);
        json.writeStringField("cat", category);
        json.writeStringField("ph", "X");
        json.writeNumberField("ts", micros(startNanos));
        json.writeNumberField("dur", Math.max(0, endNanos - startNanos) / 1000.0);
        json.writeNumberField("pid", PID);
        json.writeNumberField("tid", tid);
        if (args != null) {
          json.writeObjectFieldStart("args");
          args.write(json);
          json.writeEndObject();
        }
        json.writeEndObject();
        written++;
      } catch (IOException e) {
        throw new UncheckedIOException("Writing the trace " + file + " failed", e);
      }
    }
  }

  /** Whether the next span is kept: all of them below half the bound, then ever fewer. */
  private boolean sampled() {
    if (written >= maxSpans) {
      return false;
    }
    long left = maxSpans - written;
    int halvings = 63 - Long.numberOfLeadingZeros(Math.max(1, maxSpans / left));
    return (offered++ & ((1L << halvings) - 1)) == 0;
  }

  private void meta(long tid, String name) throws IOException {
    json.writeStartObject();
    json.writeStringField("name", "thread_name");
    json.writeStringField("ph", "M");
    json.writeNumberField("pid", PID);
    json.writeNumberField("tid", tid);
    json.writeObjectFieldStart("args");
    json.writeStringField("name", name);
    json.writeEndObject();
    json.writeEndObject();
  }

  /** A counter event of every running stage's output queue now. */
  void queues() {
    Map<String, Integer> sizes = ExecutorStats.queueItems();
    if (sizes.isEmpty()) {
      return;
    }
    synchronized (this) {
      if (closed) {
        return;
      }
      try {
        json.writeStartObject();
        json.writeStringField("name", "queue items");
        json.writeStringField("ph", "C");
        json.writeNumberField("ts", micros(System.nanoTime()));
        json.writeNumberField("pid", PID);
        json.writeObjectFieldStart("args");
        for (Map.Entry<String, Integer> e : sizes.entrySet()) {
          json.writeNumberField(e.getKey(), e.getValue());
        }
        json.writeEndObject();
        json.writeEndObject();
      } catch (IOException e) {
        closed = true; // the spans report the failure; the counters just stop
      }
    }
  }

  private double micros(long nanos) {
    return (nanos - originNanos) / 1000.0;
  }

  @Override
  public void close() throws IOException {
    counters.shutdownNow();
    synchronized (this) {
      if (json.isClosed()) {
        return;
      }
      closed = true;
      try {
        json.writeEndArray();
        json.writeEndObject();
      } finally {
        json.close();
      }
    }
  }
}
