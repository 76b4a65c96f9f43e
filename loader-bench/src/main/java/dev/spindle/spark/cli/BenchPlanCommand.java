package dev.spindle.spark.cli;

import dev.spindle.spark.feed.FeedResultBench;
import dev.spindle.spark.plan.PlanScaleBench;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench plan}: {@link PlanScaleBench}, what an epoch plan costs at scale, and {@link
 * FeedResultBench}, what feed's task results and ledger cost on that plan. Main thread.
 */
@Command(
    name = "plan",
    header = "Epoch plan cost on the driver and in a task, at scale.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Builds a synthetic manifest of tar shards and reports the driver's time and"
            + " heap per epoch plan, the bytes shipped to a task and a task's time to derive its"
            + " slice, then what feed's tasks return per epoch and the driver's ledger over it.")
final class BenchPlanCommand implements Callable<Integer> {
  @Option(
      names = "--shards",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Shards in the synthetic manifest (default ${DEFAULT-VALUE})")
  int shards = 1_000_000;

  @Option(
      names = "--per-shard",
      paramLabel = "K",
      converter = Converters.PositiveInt.class,
      description = "Samples per shard (default ${DEFAULT-VALUE})")
  int perShard = 1_000;

  @Option(
      names = "--world-size",
      paramLabel = "W",
      converter = Converters.PositiveInt.class,
      description = "Trainer ranks (default ${DEFAULT-VALUE})")
  int worldSize = 8_192;

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    PlanScaleBench.run(
        new PlanScaleBench.Options(shards, perShard, worldSize, report.file),
        FeedResultBench::measure);
    return 0;
  }
}
