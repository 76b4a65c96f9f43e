package dev.spindle.spark.cli;

import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * What building the picocli command tree costs a cold JVM before a command runs: {@code one} times
 * the tree {@code spindle train ...} runs on ({@link SpindleMain#commandLine(String)}: the root and
 * {@code train}), {@code whole} the whole tree ({@code help}'s), each parsing a {@code train}
 * command line. Logging is started first, so that neither figure carries Log4j's start (which every
 * command pays). Run each in a fresh JVM with the launcher's flags and classpath (its class data
 * sharing archive included, as {@code bin/spindle} passes it). A benchmark: it reports, it asserts
 * nothing.
 */
public final class CommandTreeCost {
  private CommandTreeCost() {}

  public static void main(String[] args) {
    boolean whole = args.length == 1 && args[0].equals("whole");
    if (!whole && !(args.length == 1 && args[0].equals("one"))) {
      System.err.println("usage: CommandTreeCost one|whole");
      System.exit(2);
    }
    long start = System.nanoTime();
    LoggerFactory.getLogger(CommandTreeCost.class).debug("logging started");
    long logged = System.nanoTime();
    picocli.CommandLine cli = whole ? SpindleMain.commandLine() : SpindleMain.commandLine("train");
    cli.parseArgs("train", "--input", "/data/shards", "--world-size", "1", "--", "train.py");
    long built = System.nanoTime();
    System.out.printf(
        Locale.ROOT,
        "%s tree: %.0f ms to build and parse (logging's start before it: %.0f ms)%n",
        whole ? "whole" : "one-command",
        (built - logged) / 1e6,
        (logged - start) / 1e6);
  }
}
