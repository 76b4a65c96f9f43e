package dev.spindle.spark.cli;

import dev.spindle.spark.job.PreprocessJob;
import dev.spindle.spark.sink.OutputWriteException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * How the command line reports a usage error (exit 2) and a failed job (exit 1). Public for {@link
 * #rootMessage}, which tests check; stateless, any thread.
 */
public final class Errors {
  private Errors() {}

  /** {@code spindle: <what was wrong>}, suggestions for a mistyped flag, and where help is. */
  static int usage(ParameterException e, String[] argv) {
    CommandLine cl = e.getCommandLine();
    PrintWriter err = cl.getErr();
    err.println("spindle: " + message(e));
    if (elsewhere(e) == null) { // a command of another module is no typo of one of these
      UnmatchedArgumentException.printSuggestions(e, err);
    }
    boolean commands = !cl.getSubcommands().isEmpty();
    err.println(
        "Run '"
            + cl.getCommandSpec().qualifiedName()
            + " --help' for its "
            + (commands ? "commands." : "flags."));
    return SpindleMain.USAGE;
  }

  /** {@code spindle <command> failed: <the cause that says what and where>}. */
  static int failure(Exception e, CommandLine cl, ParseResult parsed) {
    cl.getErr().println(cl.getCommandSpec().qualifiedName() + " failed: " + rootMessage(e));
    return SpindleMain.FAILED;
  }

  /**
   * A bad value names the flag, the value and what is allowed: {@code Invalid value for --x: 'v'
   * (...)}.
   */
  static String message(ParameterException e) {
    if (e.getCause() instanceof TypeConversionException t
        && e.getArgSpec() instanceof OptionSpec o) {
      return "Invalid value for " + o.longestName() + ": " + t.getMessage();
    }
    CommandLine cl = e.getCommandLine();
    if (e instanceof UnmatchedArgumentException u
        && !cl.getSubcommands().isEmpty()
        && !u.getUnmatched().isEmpty()
        && !u.getUnmatched().get(0).startsWith("-")) {
      String elsewhere = elsewhere(e);
      return "Unknown command '"
          + u.getUnmatched().get(0)
          + "' for '"
          + cl.getCommandSpec().qualifiedName()
          + "' (commands: "
          + String.join(", ", cl.getSubcommands().keySet())
          + ")"
          + (elsewhere == null ? "" : "; " + elsewhere);
    }
    return e.getMessage();
  }

  /**
   * For an unknown {@code spindle <command>} that another module installs (loader-bench's {@code
   * bench}), what to run instead; else null.
   */
  private static String elsewhere(ParameterException e) {
    return e instanceof UnmatchedArgumentException u
            && e.getCommandLine().getParent() == null
            && !u.getUnmatched().isEmpty()
        ? InstalledCommands.whyMissing(u.getUnmatched().get(0))
        : null;
  }

  /** The message to print for a failed command: the deepest cause that says what and where. */
  public static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null
        && t.getCause() != t
        && !(t instanceof PreprocessJob.JobFailure)
        && !(t instanceof OutputWriteException)) {
      if (t.getMessage() != null && t.getMessage().contains("Failed reading shard")) {
        break;
      }
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }
}
