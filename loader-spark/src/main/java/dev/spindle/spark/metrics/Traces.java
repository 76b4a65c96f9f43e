package dev.spindle.spark.metrics;

import dev.spindle.gpu.feed.CopySpans;
import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.pipeline.Trace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.apache.spark.SparkConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts and stops an executor's trace for {@link SpindlePlugin}: {@code spark.spindle.trace.file}
 * as given on the driver (local mode, executor id "driver"), {@code FILE.<executor id>} on an
 * executor. Spark's plugin thread.
 */
final class Traces {
  private static final Logger LOG = LoggerFactory.getLogger(Traces.class);

  /** The executor's feeders' copies go into its trace too. */
  private static final CopySpans.Tracer COPIES = Trace::copy;

  private Traces() {}

  /** The file executor {@code executorId} writes for {@code file}. */
  static Path fileFor(String file, String executorId) {
    return Path.of("driver".equals(executorId) ? file : file + "." + executorId);
  }

  static void start(SparkConf conf, String executorId) {
    String file = conf.get(SpindleConfig.TRACE_FILE.key(), "").trim();
    if (file.isEmpty()) {
      return;
    }
    long max =
        SpindleConfig.TRACE_MAX_SPANS.parse(
            conf.get(
                SpindleConfig.TRACE_MAX_SPANS.key(), SpindleConfig.TRACE_MAX_SPANS.defaultValue()),
            SpindleConfig.TRACE_MAX_SPANS.key());
    Path path = fileFor(file, executorId);
    try {
      Trace.start(path, max);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot write the trace " + path + " (spark.spindle.trace.file=" + file + ")", e);
    }
    CopySpans.install(COPIES);
    LOG.info("Writing the trace of executor {} to {}", executorId, path.toAbsolutePath());
  }

  static void stop() {
    CopySpans.uninstall(COPIES);
    try {
      Trace.stop();
    } catch (IOException e) {
      LOG.warn("Could not complete the trace file", e);
    }
  }
}
