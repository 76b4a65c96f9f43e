package dev.spindle.spark.cli;

import dev.spindle.spark.iobench.IoBench;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code bench io}: {@link IoBench}, feed's reads and speed from an object store. Main thread. */
@Command(
    name = "io",
    header = "Bytes, requests and images/s of feed from an object store.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Feeds one epoch (window shuffle) of WebDataset tar shards on embedded Spark per variant:"
            + " local (file://, the reference), store (a counting object-store stand-in,"
            + " counted:///), store-latency (the same, --latency-ms per request), and the"
            + " index and cache variants where this build has their keys. Reports per variant"
            + " bytes_read_per_epoch, dataset_bytes, bytes_read_ratio, requests_per_sample,"
            + " images_per_s and images_per_s_vs_local, as medians of --rounds rounds"
            + " (docs/benchmarks.md).")
final class BenchIoCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--tars",
      paramLabel = "DIR",
      description = "Read these tar shards instead of generating --shards x --per-shard")
  Path tars;

  @Option(
      names = "--shards",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Shards to generate (default ${DEFAULT-VALUE})")
  int shards = 16;

  @Option(
      names = "--per-shard",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Samples per generated shard, JPEGs of ~50-110 KB (default ${DEFAULT-VALUE})")
  int perShard = 128;

  @Option(
      names = "--world-size",
      paramLabel = "W",
      converter = Converters.PositiveInt.class,
      description = "Trainer ranks, at least 4 (default ${DEFAULT-VALUE})")
  int worldSize = 4;

  @Option(
      names = "--batch-size",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Rows per batch (default ${DEFAULT-VALUE})")
  int batchSize = 32;

  @Option(
      names = "--shuffle-window",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description =
          "spark.spindle.shuffleWindow: samples per window, so shards per read group"
              + " (default ${DEFAULT-VALUE})")
  int shuffleWindow = 1024;

  @Option(
      names = "--latency-ms",
      paramLabel = "MS",
      converter = Converters.NonNegativeInt.class,
      description =
          "The store's latency per request in the *-latency variants (default ${DEFAULT-VALUE})")
  int latencyMs = 20;

  @Option(
      names = "--variants",
      paramLabel = "NAME",
      split = ",",
      description = "Only these variants (default: every one this build can run)")
  List<String> variants = new ArrayList<>();

  @Option(
      names = "--rounds",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Rounds, each running every variant (default ${DEFAULT-VALUE})")
  int rounds = 3;

  @Option(
      names = "--threads",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Spark cores (local[N]) and spark.spindle.threads (default ${DEFAULT-VALUE})")
  int threads = 2;

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    IoBench.Options options;
    try {
      options =
          new IoBench.Options(
              tars,
              shards,
              perShard,
              worldSize,
              batchSize,
              shuffleWindow,
              latencyMs,
              rounds,
              threads,
              List.copyOf(variants),
              report.file,
              spec.commandLine().getParseResult().originalArgs());
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    IoBench.run(options);
    return 0;
  }
}
