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
    CommandLine cli = commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    return cli.execute(argv);
  }

  /**
   * The command tree, with the commands installed on the classpath ({@link SpindleSubcommand}), and
   * Spindle's exit-code policy and messages.
   */
  static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new SpindleCommand());
    InstalledCommands.addTo(cli);
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    cli.setParameterExceptionHandler(Errors::usage);
    cli.setExecutionExceptionHandler(Errors::failure);
    cli.getSubcommands().get("train").setStopAtPositional(true); // the script's flags are its own
    return cli;
  }
}
