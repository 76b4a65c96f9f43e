package dev.spindle.spark.cli;

import dev.spindle.spark.example.GenSample;
import dev.spindle.spark.metrics.JobReport;
import java.util.concurrent.Callable;
import org.apache.hadoop.conf.Configuration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code gen-sample}: a deterministic synthetic dataset as tar shards; no Spark. Main thread. */
@Command(
    name = "gen-sample",
    header = "Write a deterministic synthetic dataset as tar shards.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Writes a deterministic synthetic dataset as WebDataset tar shards (KEY.jpg +"
          + " KEY.cls, 10 classes)."
    })
final class GenSampleCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--output",
      required = true,
      paramLabel = "DIR",
      description = "Where the shards go")
  String output;

  @Option(
      names = "--shards",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Shards (default ${DEFAULT-VALUE})")
  int shards = 4;

  @Option(
      names = "--per-shard",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Samples per shard (default ${DEFAULT-VALUE})")
  int perShard = 64;

  @Option(
      names = "--width",
      paramLabel = "PIXELS",
      converter = Converters.PositiveInt.class,
      description = "Image width, at least 8 (default ${DEFAULT-VALUE})")
  int width = 320;

  @Option(
      names = "--height",
      paramLabel = "PIXELS",
      converter = Converters.PositiveInt.class,
      description = "Image height, at least 8 (default ${DEFAULT-VALUE})")
  int height = 240;

  @Option(
      names = "--seed",
      paramLabel = "S",
      converter = Converters.AnyLong.class,
      description = "Seed of the images and labels (default ${DEFAULT-VALUE})")
  long seed;

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    GenSample.Options options;
    try {
      options = new GenSample.Options(output, shards, perShard, width, height, seed);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    JobReport r = GenSample.run(options, new Configuration());
    report.write(r);
    Jobs.summary(spec.commandLine(), r.fields());
    return 0;
  }
}
