package dev.spindle.spark.cli;

import dev.spindle.spark.config.ConfigDocs;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code config}: every {@code spark.spindle.*} key with its default. Main thread. */
@Command(
    name = "config",
    header = "Print every spark.spindle.* key with its default.",
    mixinStandardHelpOptions = true,
    description = "Prints every spark.spindle.* key with its default and documentation.")
final class ConfigCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @ArgGroup(exclusive = true)
  Format format;

  /** One of the two formats; --example when neither is given. */
  static final class Format {
    @Option(names = "--example", description = "As spark-defaults.conf (the default)")
    boolean example;

    @Option(names = "--markdown", description = "As the Markdown table of docs/reference/config.md")
    boolean markdown;
  }

  @Override
  public Integer call() {
    boolean markdown = format != null && format.markdown;
    spec.commandLine()
        .getOut()
        .print(markdown ? ConfigDocs.markdownTable() : ConfigDocs.sparkDefaultsExample());
    spec.commandLine().getOut().flush();
    return 0;
  }
}
