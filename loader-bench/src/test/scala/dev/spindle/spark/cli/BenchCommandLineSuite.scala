package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}

import org.scalatest.funsuite.AnyFunSuite

/**
 * `spindle bench` as loader-bench installs it ([[BenchSubcommand]]): listed by help, every bench
 * command's usage, a bad value refused before anything runs (SpindleMainSuite's checks, for the
 * commands loader-spark no longer has).
 */
class BenchCommandLineSuite extends AnyFunSuite {
  /** (exit code, stdout, stderr) of `spindle args...`. */
  private def run(args: String*): (Int, String, String) = {
    val out = new ByteArrayOutputStream()
    val err = new ByteArrayOutputStream()
    val code = SpindleMain.run(args.toArray, new PrintStream(out, true), new PrintStream(err, true))
    (code, out.toString, err.toString)
  }

  private val commands = Seq(Seq("bench"), Seq("bench", "pipeline"), Seq("bench", "images"),
    Seq("bench", "feeder"), Seq("bench", "soak"), Seq("bench", "scheduler"), Seq("bench", "plan"),
    Seq("bench", "io"))

  test("help lists bench, between the job commands and report, and exits 0") {
    val (code, out, _) = run("help")
    assert(code == 0)
    for (c <- commands.filter(_.size == 1)) assert(out.contains("\n  " + c.head + " "), c)
    assert(out.indexOf("\n  example ") < out.indexOf("\n  bench ")
      && out.indexOf("\n  bench ") < out.indexOf("\n  report "), out)
    val (bench, _, benchErr) = run("bench")
    assert(bench == 2 && benchErr.contains("Usage: spindle bench"), benchErr)
  }

  test("every bench command prints its usage with --help and through help, exit 0") {
    for (c <- commands) {
      val (code, out, err) = run(c :+ "--help": _*)
      assert(code == 0, s"$c: $err")
      assert(out.contains("Usage: spindle " + c.mkString(" ")), out)
    }
    val (code, out, _) = run("help", "bench")
    assert(code == 0 && out.contains("pipeline|images|feeder|datasource|soak|scheduler|plan"), out)
  }

  test("a bad value is refused before the benchmark starts, naming the flag, the value and what is allowed") {
    val (code, _, err) = run("bench", "plan", "--shards", "0")
    assert(code == 2, err)
    assert(err.contains("spindle: Invalid value for --shards: '0' (must be an integer > 0)"), err)
    assert(!err.contains("For input string"), err)
  }
}
