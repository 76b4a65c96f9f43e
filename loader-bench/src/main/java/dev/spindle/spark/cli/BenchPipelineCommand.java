package dev.spindle.spark.cli;

import dev.spindle.spark.config.SpindleConfig;
import dev.spindle.spark.pipeline.PipelineBench;
import dev.spindle.spark.pipeline.Trace;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code bench pipeline}: {@link PipelineBench}, the engine's own cost. Main thread. */
@Command(
    name = "pipeline",
    header = "The pipeline engine's own cost.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = "The pipeline engine's hand-off cost per item and stage, and its scaling.")
final class BenchPipelineCommand implements Callable<Integer> {
  @Option(
      names = "--items",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Items per run (default ${DEFAULT-VALUE})")
  int items = 200_000;

  @Option(
      names = "--max-threads",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Most threads of the scaling runs (default: the cores)")
  int maxThreads = Runtime.getRuntime().availableProcessors();

  @Option(
      names = "--stages",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "No-op stages of the hand-off chain (default ${DEFAULT-VALUE})")
  int stages = 4;

  @Option(
      names = "--repeats",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Runs per figure; the median is reported (default ${DEFAULT-VALUE})")
  int repeats = 5;

  @Option(
      names = "--trace",
      paramLabel = "FILE",
      description =
          "Write a Chrome trace of the runs' items to FILE (figures then include the"
              + " tracing cost)")
  Path trace;

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    if (trace != null) {
      Trace.start(trace, SpindleConfig.TRACE_MAX_SPANS.defaultParsed());
    }
    try {
      PipelineBench.run(
          items, maxThreads, stages, repeats, report.file == null ? null : report.file.toFile());
    } finally {
      Trace.stop();
    }
    return 0;
  }
}
