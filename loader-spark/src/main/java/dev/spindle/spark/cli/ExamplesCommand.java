package dev.spindle.spark.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code example <name>}: runnable examples on real data; alone, usage and exit 2. */
@Command(
    name = "example",
    header = "Runnable examples on real data (fashion-mnist).",
    mixinStandardHelpOptions = true,
    synopsisSubcommandLabel = "<example>",
    description = "Runnable examples on real data.",
    subcommands = FashionMnistCommand.class)
final class ExamplesCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return SpindleMain.USAGE;
  }
}
