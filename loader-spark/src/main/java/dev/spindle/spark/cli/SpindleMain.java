package dev.spindle.spark.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * Entry point of {@code bin/spindle} and of the shaded jar ({@code spark-submit
 * loader-spark-*-all.jar <command> ...}): runs one command and exits with its code: 0 success, 1
 * the job failed, 2 a usage error. Main thread.
 */
public final class SpindleMain {
  /** Exit code of a usage error: unknown command or flag, bad value, missing flag. */
  public static final int USAGE = 2;

  /** Exit code of a job that failed. */
  public static final int FAILED = 1;

  private SpindleMain() {}

  public static void main(String[] argv) {
    TerminalStderr.use(System.getProperty(TerminalStderr.PATH));
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
