package dev.spindle.spark.cli;

import dev.spindle.spark.progress.ProgressMode;
import dev.spindle.spark.sql.DataSourceBench;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code bench datasource}: {@link DataSourceBench}, the data source against preprocess. */
@Command(
    name = "datasource",
    header = "The spindle DataSource's images/s against preprocess's.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Reads --input through spark.read.format(\"spindle\") into Spark's noop sink and"
            + " preprocesses it to Arrow files, alternating which goes first, on embedded Spark with"
            + " the same threads; reports both images/s and their ratio per round and as medians.")
final class BenchDataSourceCommand implements Callable<Integer> {
  @Option(
      names = "--input",
      required = true,
      paramLabel = "URI",
      description = "Shards to read (anything preprocess reads)")
  String input;

  @Option(
      names = "--threads",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Spark cores and spark.spindle.threads (default: the cores)")
  int threads = Runtime.getRuntime().availableProcessors();

  @Option(
      names = "--size",
      paramLabel = "S",
      converter = Converters.PositiveInt.class,
      description = "Output image size (default ${DEFAULT-VALUE})")
  int size = 224;

  @Option(
      names = "--batch-size",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Rows per batch (default ${DEFAULT-VALUE})")
  int batchSize = 256;

  @Option(
      names = "--rounds",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Rounds, each running both (default ${DEFAULT-VALUE})")
  int rounds = 3;

  @Mixin ReportOption report;

  @Mixin ProgressFlags progress;

  @Override
  public Integer call() throws Exception {
    DataSourceBench.run(
        new DataSourceBench.Options(
            input,
            threads,
            size,
            batchSize,
            rounds,
            report.file,
            progress.mode == ProgressMode.NEVER ? null : progress::start,
            progress.with(Map.of())));
    return 0;
  }
}
