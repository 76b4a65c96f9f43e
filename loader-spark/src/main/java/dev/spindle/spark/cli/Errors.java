package dev.spindle.spark.cli;

import dev.spindle.spark.config.Nearest;
import dev.spindle.spark.preprocess.PreprocessJob;
import dev.spindle.spark.sink.OutputWriteException;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
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

  /**
   * {@code spindle: <what was wrong>}, suggestions for a mistyped command, and where help is. A
   * mistyped flag comes first, named with the closest flag of its command: picocli would rather
   * report the required flag it stood for as missing.
   */
  static int usage(ParameterException e, String[] argv) {
    CommandLine cl = e.getCommandLine();
    PrintWriter err = cl.getErr();
    String typos = unknownFlags(cl);
    if (typos != null) {
      err.println("spindle: " + typos);
    } else {
      err.println("spindle: " + message(e));
      if (elsewhere(e) == null) { // a command of another module is no typo of one of these
        UnmatchedArgumentException.printSuggestions(e, err);
      }
    }
    boolean commands = !cl.getSubcommands().isEmpty();
    err.println(
        "Run '"
            + cl.getCommandSpec().qualifiedName()
            + " --help' for its "
            + (commands ? "commands." : "flags."));
    return SpindleMain.USAGE;
  }

  /**
   * {@code spindle <command> failed: <the cause that says what and where>} (exit 1), or after
   * Ctrl-C {@code spindle <command>: interrupted by the user} (exit 130); either way the command's
   * {@code --report}, when given, is written saying so.
   */
  static int failure(Exception e, CommandLine cl, ParseResult parsed) {
    String command = cl.getCommandSpec().qualifiedName();
    boolean interrupted = Interruption.happened();
    String why = interrupted ? Interruption.MESSAGE : rootMessage(e);
    cl.getErr().println(interrupted ? command + ": " + why : command + " failed: " + why);
    int code = interrupted ? Interruption.EXIT : SpindleMain.FAILED;
    ReportOption report = ReportOption.of(cl);
    if (report != null) {
      try {
        report.writeFailure(
            command.substring(cl.getCommandSpec().root().name().length()).trim(),
            interrupted ? "interrupted" : "failed",
            why,
            code);
      } catch (IOException | RuntimeException w) {
        cl.getErr().println("spindle: cannot write the report " + report.file + ": " + w);
      }
    }
    return code;
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
   * {@code Unknown option: '--ouptut' (did you mean --output?)} for every flag the command line
   * {@code cl} parsed does not know, each with the closest flag of that command ({@link Nearest});
   * null when there is none.
   */
  static String unknownFlags(CommandLine cl) {
    List<String> unmatched = cl.getUnmatchedArguments();
    if (unmatched.isEmpty()
        || (!cl.getSubcommands().isEmpty() && !unmatched.get(0).startsWith("-"))) {
      return null; // an unknown command: the flags after it are that command's
    }
    List<String> flags = new ArrayList<>();
    for (String arg : unmatched) {
      if (arg.startsWith("-") && arg.length() > 1 && !arg.matches("-[0-9.]+")) {
        String flag = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
        flags.add("'" + flag + "' (did you mean " + closestFlag(cl, flag) + "?)");
      }
    }
    if (flags.isEmpty()) {
      return null;
    }
    return (flags.size() == 1 ? "Unknown option: " : "Unknown options: ")
        + String.join(", ", flags);
  }

  /** The flag of {@code cl}'s command closest to {@code flag}: a long one for a long one. */
  private static String closestFlag(CommandLine cl, String flag) {
    List<String> names = new ArrayList<>();
    for (OptionSpec o : cl.getCommandSpec().options()) {
      for (String name : o.names()) {
        if (!flag.startsWith("--") || name.startsWith("--")) {
          names.add(name);
        }
      }
    }
    return Nearest.among(flag, names);
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
