package dev.spindle.spark.cli;

/**
 * A command another module adds to {@code spindle} when its jar is on the classpath, found with
 * {@link java.util.ServiceLoader} through a {@code
 * META-INF/services/dev.spindle.spark.cli.SpindleSubcommand} file in that jar. This is how
 * loader-bench adds {@code bench} without loader-spark depending on it: {@code bin/spindle} puts
 * loader-bench on the classpath; the shaded jar leaves it out, and there {@code bench} is an
 * unknown command. Implementations need a public no-argument constructor; called on the main
 * thread, once per command line.
 */
public interface SpindleSubcommand {
  /** The command's name as typed, e.g. {@code bench}. */
  String name();

  /**
   * A new picocli command object (a class annotated with {@code @Command}) for one command line,
   * which then owns it.
   */
  Object command();
}
