package dev.spindle.spark.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code spindle}: the command tree; alone, it prints the usage and exits 2. Other modules add
 * commands to it ({@link SpindleSubcommand}: loader-bench's {@code bench}). Main thread.
 */
@Command(
    name = "spindle",
    mixinStandardHelpOptions = true,
    versionProvider = SpindleCommand.Version.class,
    description = "Spindle: a thread-based distributed data loader on Apache Spark.",
    synopsisSubcommandLabel = "<command>",
    footer = {
      "",
      "Jobs also take --master URL, --conf spark.key=value (repeatable) and --properties-file"
          + " FILE (spark.* settings, e.g. conf/examples/*.conf); flags and --conf win over the"
          + " file. Without --master, jobs run on embedded Spark (local[*], bound to"
          + " 127.0.0.1). bin/spindle starts the Spark UI and prints its address; --no-ui turns"
          + " it off.",
      "Exit codes: 0 done, 1 the job failed, 2 a usage error (unknown flag or"
          + " spark.spindle.* key, bad value, missing flag), 130 interrupted by the user"
          + " (Ctrl-C: the job is cancelled and its temporary files removed).",
      "Run 'spindle <command> --help' (or 'spindle help <command>') for a command's flags."
    })
final class SpindleCommand implements Callable<Integer> {
  /**
   * The built-in commands in the order {@code help} lists them (installed ones go before {@code
   * report}: {@link InstalledCommands}). Not in the annotation: picocli builds every command given
   * there, and building them all (reflecting over each one's options and mixins) took about 60 ms
   * more of each command's start than building one ({@code CommandTreeCost} in loader-bench);
   * {@link SpindleMain#commandLine(String)} builds only the one that runs.
   */
  static final List<Class<?>> COMMANDS =
      List.of(
          DemoCommand.class,
          GenSampleCommand.class,
          PreprocessCommand.class,
          FeedCommand.class,
          TrainCommand.class,
          ImportCommand.class,
          ExamplesCommand.class,
          ReportCommand.class,
          ConfigCommand.class,
          HelpCommand.class);

  @Spec CommandSpec spec;

  /**
   * The built-in command named {@code name}, or null for none and for {@code help} (which lists the
   * others, so it needs the whole tree).
   */
  static Class<?> builtIn(String name) {
    for (Class<?> c : COMMANDS) {
      if (c != HelpCommand.class && c.getAnnotation(Command.class).name().equals(name)) {
        return c;
      }
    }
    return null;
  }

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return SpindleMain.USAGE;
  }

  /** The version in the jar's manifest, when there is one. */
  static final class Version implements picocli.CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = SpindleCommand.class.getPackage().getImplementationVersion();
      return new String[] {"Spindle " + (v == null ? "(development build)" : v)};
    }
  }
}
