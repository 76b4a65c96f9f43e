package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}

/** The command line in this JVM, as the suites run it. */
object Cli {
  /** (exit code, stdout, stderr) of `spindle args...`. */
  def run(args: String*): (Int, String, String) = {
    val out = new ByteArrayOutputStream()
    val err = new ByteArrayOutputStream()
    val code = SpindleMain.run(args.toArray, new PrintStream(out, true), new PrintStream(err, true))
    (code, out.toString, err.toString)
  }
}
