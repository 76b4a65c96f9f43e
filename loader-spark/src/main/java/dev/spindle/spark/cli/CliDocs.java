package dev.spindle.spark.cli;

import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Help.Ansi;

/**
 * Renders the generated part of {@code docs/reference/cli.md}: every command's usage help, exactly
 * as {@code bin/spindle <command> --help} prints it (no colours, picocli's default width), in the
 * order {@code bin/spindle help} lists the commands, subcommands after their parent. The commands
 * are those of this classpath: with loader-bench's jar on it, {@code bench} and its subcommands
 * too. A test fails when the file drifts from what this renders; {@code bin/gen-docs} writes it.
 * Stateless; any thread.
 */
public final class CliDocs {
  private CliDocs() {}

  /** Prints {@link #markdown()} to stdout (what {@code bin/gen-docs} puts into cli.md). */
  public static void main(String[] args) {
    System.out.print(markdown());
    System.out.flush();
  }

  /** Every command's usage help, one section each, as Markdown. */
  public static String markdown() {
    StringBuilder s = new StringBuilder();
    append(s, SpindleMain.commandLine());
    return s.toString();
  }

  private static void append(StringBuilder s, CommandLine command) {
    if (command.getCommandSpec().usageMessage().hidden()) {
      return;
    }
    s.append("### `").append(command.getCommandSpec().qualifiedName()).append("`\n\n");
    s.append("```\n").append(command.getUsageMessage(Ansi.OFF)).append("```\n\n");
    for (Map.Entry<String, CommandLine> sub : command.getSubcommands().entrySet()) {
      // picocli lists aliases as extra keys of the same command: render each command once
      if (sub.getKey().equals(sub.getValue().getCommandName())) {
        append(s, sub.getValue());
      }
    }
  }
}
