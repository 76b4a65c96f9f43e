package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --trace FILE}: a Chrome trace-event JSON trace of the job's pipelines. */
final class TraceOption {
  @Option(
      names = "--trace",
      paramLabel = "FILE",
      description =
          "Write a Chrome trace (Perfetto, chrome://tracing) of every stage's items to"
              + " FILE; executors of a cluster write FILE.<executor id> on their hosts"
              + " (spark.spindle.trace.file)")
  Path file;

  void putInto(JobConf conf) {
    conf.flag(
        "--trace",
        file == null ? null : file.toAbsolutePath().toString(),
        SpindleConfig.TRACE_FILE.key());
  }
}
