package dev.spindle.spark.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code bench pipeline|images|feeder|datasource|soak|scheduler|plan|io}: the benchmarks
 * (docs/benchmarks.md); alone, usage and exit 2.
 */
@Command(
    name = "bench",
    header = "Benchmarks: pipeline, images, feeder, datasource, soak, scheduler, plan, io.",
    mixinStandardHelpOptions = true,
    synopsisSubcommandLabel = "pipeline|images|feeder|datasource|soak|scheduler|plan|io",
    description =
        "Benchmarks; each prints and optionally writes a JSON report" + " (docs/benchmarks.md).",
    subcommands = {
      BenchPipelineCommand.class,
      BenchImagesCommand.class,
      BenchFeederCommand.class,
      BenchDataSourceCommand.class,
      BenchSoakCommand.class,
      BenchSchedulerCommand.class,
      BenchPlanCommand.class,
      BenchIoCommand.class
    })
final class BenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return SpindleMain.USAGE;
  }
}
