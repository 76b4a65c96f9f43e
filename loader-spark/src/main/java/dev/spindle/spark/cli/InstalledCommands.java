package dev.spindle.spark.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import picocli.CommandLine;

/**
 * The commands other modules install ({@link SpindleSubcommand}): added to the command tree after
 * the job commands, before {@code report} (where {@code help} has always listed {@code bench}),
 * and, for those Spindle knows of, why one is missing. Stateless; main thread.
 */
final class InstalledCommands {
  /** The first built-in command listed after the installed ones. */
  private static final String LISTED_BEFORE = "report";

  /** Commands that live in another module, and what to run instead where that one is absent. */
  private static final Map<String, String> ELSEWHERE =
      Map.of(
          "bench",
          "benchmarks are in the loader-bench module, which the shaded jar leaves out: run them with"
              + " bin/spindle bench");

  private InstalledCommands() {}

  /** Adds every installed command to {@code cli} (SpindleCommand's tree). */
  static void addTo(CommandLine cli) {
    List<SpindleSubcommand> installed = new ArrayList<>();
    ServiceLoader.load(SpindleSubcommand.class, SpindleSubcommand.class.getClassLoader())
        .forEach(installed::add);
    if (installed.isEmpty()) {
      return;
    }
    // picocli lists commands in the order they were added: take those from LISTED_BEFORE on off
    // the tree, add the installed ones, then put them back
    Map<String, CommandLine> after = new LinkedHashMap<>();
    boolean moving = false;
    for (String name : List.copyOf(cli.getSubcommands().keySet())) {
      moving |= name.equals(LISTED_BEFORE);
      if (moving) {
        after.put(name, cli.getCommandSpec().removeSubcommand(name));
      }
    }
    installed.forEach(c -> cli.addSubcommand(c.name(), c.command()));
    after.forEach(cli::addSubcommand);
  }

  /** Why {@code name} is not a command of this classpath, or null when it is not one of ours. */
  static String whyMissing(String name) {
    return ELSEWHERE.get(name);
  }
}
