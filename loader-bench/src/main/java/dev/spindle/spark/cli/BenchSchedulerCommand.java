package dev.spindle.spark.cli;

import dev.spindle.spark.feed.SchedulerBench;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code bench scheduler}: {@link SchedulerBench}, Spark's cost of plain and barrier stages. */
@Command(
    name = "scheduler",
    header = "Spark's scheduling cost of plain and barrier stages.",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Runs stages of no-op tasks on embedded Spark: plain on local[2], barrier (each"
            + " task calls barrier() once) on local[N] with a slot per task; reports the median wall"
            + " time per stage and per task for each task count.")
final class BenchSchedulerCommand implements Callable<Integer> {
  @Option(
      names = "--tasks",
      paramLabel = "N,N,...",
      split = ",",
      converter = Converters.PositiveInt.class,
      description =
          "Task counts (default 256,1024,4096; a barrier stage of N tasks runs N task"
              + " threads in this JVM: 8,192 overloads a small machine)")
  int[] tasks = {256, 1024, 4096};

  @Option(
      names = "--repeats",
      paramLabel = "N",
      converter = Converters.PositiveInt.class,
      description = "Stages per figure; the median is reported (default ${DEFAULT-VALUE})")
  int repeats = 3;

  @Mixin ReportOption report;

  @Override
  public Integer call() throws Exception {
    SchedulerBench.run(tasks, repeats, report.file);
    return 0;
  }
}
