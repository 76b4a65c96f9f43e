package dev.spindle.spark.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Entry point of {@code bin/spindle} and of the shaded jar ({@code spark-submit
 * loader-spark-*-all.jar <command> ...}): runs one command and exits with its code: 0 success, 1
 * the job failed, 2 a usage error, 130 interrupted by the user (Ctrl-C: {@link Interruption}). Main
 * thread.
 */
public final class SpindleMain {
  /** Exit code of a usage error: unknown command, flag or key, bad value, missing flag. */
  public static final int USAGE = 2;

  /** Exit code of a job that failed. */
  public static final int FAILED = 1;

  /** Exit code of a command interrupted by the user (Ctrl-C, SIGINT): 128 + 2, as shells say. */
  public static final int INTERRUPTED = Interruption.EXIT;

  private SpindleMain() {}

  public static void main(String[] argv) {
    TerminalStderr.use(System.getProperty(TerminalStderr.PATH));
    Interruption.install(System.err);
    System.exit(run(argv, System.out, System.err));
  }

  /** Runs one command, printing to {@code out} and {@code err}; returns the exit code. */
  public static int run(String[] argv, PrintStream out, PrintStream err) {
    CommandLine cli = commandLine(argv.length > 0 ? argv[0] : null);
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    return cli.execute(argv);
  }

  /**
   * The command tree, with the commands installed on the classpath ({@link SpindleSubcommand}), and
   * Spindle's exit-code policy and messages.
   */
  static CommandLine commandLine() {
    return commandLine(null);
  }

  /**
   * The tree {@code spindle first ...} runs on: when {@code first} names a built-in command, the
   * root with that command alone (its flags, help and errors are the same; nothing else is built),
   * otherwise the whole tree ({@link #commandLine()}: {@code help}, an installed command, an
   * unknown one, a root flag).
   */
  static CommandLine commandLine(String first) {
    CommandLine cli = new CommandLine(new SpindleCommand());
    Class<?> only = first == null ? null : SpindleCommand.builtIn(first);
    if (only != null) {
      cli.addSubcommand(only);
    } else {
      SpindleCommand.COMMANDS.forEach(cli::addSubcommand);
      InstalledCommands.addTo(cli);
    }
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    cli.setParameterExceptionHandler(Errors::usage);
    cli.setExecutionExceptionHandler(Errors::failure);
    CommandLine train = cli.getSubcommands().get("train");
    if (train != null) {
      train.setStopAtPositional(true); // the script's flags are its own
    }
    return cli;
  }
}
