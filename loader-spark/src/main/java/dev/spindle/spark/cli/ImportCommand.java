package dev.spindle.spark.cli;

import dev.spindle.spark.example.FashionMnistImport;
import dev.spindle.spark.metrics.JobReport;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code import-fashion-mnist}: {@link FashionMnistImport} on a session of its own. Main thread.
 */
@Command(
    name = "import-fashion-mnist",
    header = "Import Debian's Fashion-MNIST as tar shards.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "A Spark job that turns Debian's dataset-fashion-mnist IDX files into"
          + " WebDataset tar shards (train-NNNNN.png + .cls)."
    })
final class ImportCommand implements Callable<Integer> {
  /** The IDX files' splits. */
  enum Split {
    train,
    t10k
  }

  @Spec CommandSpec spec;

  @Option(
      names = "--output",
      required = true,
      paramLabel = "URI",
      description = "Where the shards go")
  String output;

  @Option(
      names = "--limit",
      paramLabel = "N",
      converter = Converters.NonNegativeInt.class,
      description = "Import the first N samples (0, the default: all)")
  int limit;

  @Option(
      names = "--shards",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Shards to write (default ${DEFAULT-VALUE})")
  int shards = 8;

  @Option(
      names = "--split",
      paramLabel = "train|t10k",
      description = "Which split (default ${DEFAULT-VALUE})")
  Split split = Split.train;

  @Option(
      names = "--source",
      paramLabel = "DIR",
      description = "Where the IDX files are (default ${DEFAULT-VALUE})")
  Path source = FashionMnistImport.DEBIAN_DIR;

  @Mixin ReportOption report;
  @Mixin SparkOptions spark;

  @Override
  public Integer call() throws Exception {
    CommandLine cl = spec.commandLine();
    Map<String, String> settings = JobConf.of(spark, cl).checked(cl);
    JobReport r =
        Jobs.run(
            cl,
            "import-fashion-mnist",
            spark.master,
            settings,
            session ->
                FashionMnistImport.run(session, source, split.name(), output, limit, shards));
    report.write(r);
    Jobs.summary(cl, r.fields());
    return 0;
  }
}
