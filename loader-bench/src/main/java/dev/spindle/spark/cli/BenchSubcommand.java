package dev.spindle.spark.cli;

/**
 * Installs {@code spindle bench} ({@link BenchCommand}) in the command tree when loader-bench is on
 * the classpath: the provider named in this module's {@code
 * META-INF/services/dev.spindle.spark.cli.SpindleSubcommand}. Main thread.
 */
public final class BenchSubcommand implements SpindleSubcommand {
  @Override
  public String name() {
    return "bench";
  }

  @Override
  public Object command() {
    return new BenchCommand();
  }
}
