package dev.spindle.spark.cli;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.Charset;

/**
 * Points {@link System#err} at the terminal that {@code bin/spindle} passes as {@code
 * -Dspindle.stderr.path} (its own fd 3, {@code /dev/fd/3}) when stderr is one. The launcher filters
 * fd 2 through a pipe to drop the JVM's start-up warning; writes through that pipe reach the
 * terminal later than writes to stdout, so the progress line's last erase could land after the
 * summary. Written straight to the terminal, stderr and stdout keep their order. Main thread,
 * before anything writes to stderr.
 */
final class TerminalStderr {
  /** The system property naming the terminal. */
  static final String PATH = "spindle.stderr.path";

  private TerminalStderr() {}

  /**
   * Replaces {@link System#err} with a stream to {@code path}, or leaves it alone when {@code path}
   * is null or empty or cannot be opened (then stderr goes through the launcher's filter, which is
   * still correct, only unordered with stdout). Returns whether it replaced it.
   */
  static boolean use(String path) {
    if (path == null || path.isEmpty()) {
      return false;
    }
    try {
      // append: a terminal has no offset, but a file handed here by mistake is not overwritten
      FileOutputStream terminal = new FileOutputStream(path, true);
      System.setErr(new PrintStream(new BufferedOutputStream(terminal), true, charset()));
      return true;
    } catch (IOException | SecurityException e) {
      System.err.println(
          "spindle: cannot write to the terminal at "
              + path
              + " ("
              + e.getMessage()
              + "); stderr stays as it is");
      return false;
    }
  }

  /** The charset the JVM chose for stderr (Java 17 has no {@code PrintStream.charset()}). */
  private static Charset charset() {
    String name = System.getProperty("sun.stderr.encoding");
    try {
      return name != null ? Charset.forName(name) : Charset.defaultCharset();
    } catch (IllegalArgumentException e) {
      return Charset.defaultCharset();
    }
  }
}
