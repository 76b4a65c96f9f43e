package dev.spindle.spark.cli;

import dev.spindle.spark.example.ExampleCommand;
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

/** {@code example fashion-mnist}: {@link ExampleCommand} on a session of its own. Main thread. */
@Command(
    name = "fashion-mnist",
    header = "Train PyTorch DDP ranks on Fashion-MNIST with train.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Imports Fashion-MNIST into tar shards, then runs train: each rank's task"
          + " starts loader-gpu/python/examples/fashion_mnist.py (DDP, gloo, CPU) beside its"
          + " executor and feeds it; reports test accuracy and trainer wait time. Runs on local"
          + " masters and on --master local-cluster[N,C,MB]."
    })
final class FashionMnistCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--epochs",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Training epochs (default ${DEFAULT-VALUE})")
  int epochs = 1;

  @Option(
      names = "--limit",
      paramLabel = "SAMPLES",
      converter = Converters.PositiveInt.class,
      description = "Training samples to import (default ${DEFAULT-VALUE})")
  int limit = 60000;

  @Option(
      names = "--world-size",
      paramLabel = "W",
      converter = Converters.PositiveInt.class,
      description = "Trainer ranks (default ${DEFAULT-VALUE})")
  int world = 2;

  @Option(
      names = "--batch-size",
      paramLabel = "B",
      converter = Converters.PositiveInt.class,
      description = "Rows per batch (default ${DEFAULT-VALUE})")
  int batch = 64;

  @Option(
      names = "--test-limit",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Test samples to evaluate on (default ${DEFAULT-VALUE})")
  int testLimit = 10000;

  @Option(
      names = "--work",
      paramLabel = "DIR",
      description =
          "Keep shards, logs and trainer reports here (default: a temporary directory,"
              + " removed at the end)")
  Path work;

  @Option(
      names = "--source",
      paramLabel = "DIR",
      description = "Where the IDX files are (default ${DEFAULT-VALUE})")
  Path source = FashionMnistImport.DEBIAN_DIR;

  @Option(
      names = "--python",
      paramLabel = "EXE",
      description =
          "The trainers' Python, which must import torch (spark.spindle.train.python;"
              + " default python3 on the PATH; Debian's python3-torch: /usr/bin/python3)")
  String python;

  @Mixin ReportOption report;
  @Mixin SparkOptions spark;

  /** The parsed options, making the work directory last (a refused command line leaves none). */
  ExampleCommand.Options options() throws java.io.IOException {
    return ExampleCommand.options(epochs, limit, world, batch, testLimit, work, source, python);
  }

  @Override
  public Integer call() throws Exception {
    CommandLine cl = spec.commandLine();
    Map<String, String> settings = JobConf.of(spark, cl).checked(cl);
    String master = spark.master != null ? spark.master : ExampleCommand.defaultMaster(world);
    JobReport r =
        Jobs.run(
            cl, "example", master, settings, session -> ExampleCommand.run(session, options()));
    report.write(r);
    Jobs.summary(cl, r.fields());
    return 0;
  }
}
