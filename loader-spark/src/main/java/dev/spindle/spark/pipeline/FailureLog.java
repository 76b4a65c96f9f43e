package dev.spindle.spark.pipeline;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs each distinct item failure once and counts its repeats, so a million identical errors make
 * one line plus a summary. Errors are "identical" when stage, exception type and message match with
 * digits ignored (messages often carry an offset or index). Any thread.
 */
final class FailureLog {
  private static final Logger LOG = LoggerFactory.getLogger(FailureLog.class);
  private static final int MAX_SIGNATURES = 1000;

  /** Where warnings go: the slf4j logger, or a test's recorder. */
  interface Sink {
    void warn(String message, Throwable t);
  }

  private final String pipeline;
  private final Sink sink;
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

  FailureLog(String pipeline) {
    // A checked exception is a data problem whose message says it all; a stack trace is for bugs.
    this(
        pipeline,
        (message, t) -> {
          if (t instanceof RuntimeException || t instanceof Error) {
            LOG.warn(message, t);
          } else {
            LOG.warn(message);
          }
        });
  }

  FailureLog(String pipeline, Sink sink) {
    this.pipeline = pipeline;
    this.sink = sink;
  }

  void itemFailed(String stage, String key, String reason, Throwable t) {
    String signature = stage + ": " + reason.replaceAll("[0-9]+", "#");
    if (counts.size() >= MAX_SIGNATURES && !counts.containsKey(signature)) {
      signature = stage + ": (other errors)";
    }
    LongAdder n = counts.computeIfAbsent(signature, s -> new LongAdder());
    n.increment();
    if (n.sum() == 1) {
      sink.warn(
          String.format(
              "Pipeline '%s' stage '%s' dropped item [%s]: %s (repeats are counted, not logged)",
              pipeline, stage, key, reason),
          t);
    }
  }

  /** Logs how often each repeated error occurred; called once when the pipeline ends. */
  void summarize() {
    counts.forEach(
        (signature, n) -> {
          if (n.sum() > 1) {
            sink.warn(
                String.format("Pipeline '%s' %s occurred %d times", pipeline, signature, n.sum()),
                null);
          }
        });
  }

  /** How many times errors of this signature were seen (for tests). */
  long count(String stage, String reason) {
    LongAdder n = counts.get(stage + ": " + reason.replaceAll("[0-9]+", "#"));
    return n == null ? 0 : n.sum();
  }
}
