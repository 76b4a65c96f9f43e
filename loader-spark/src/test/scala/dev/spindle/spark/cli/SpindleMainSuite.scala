package dev.spindle.spark.cli

import java.nio.file.Files

import dev.spindle.spark.example.GenSample
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** The command line in this JVM: usage, exit codes, and every value refused before Spark starts. */
class SpindleMainSuite extends AnyFunSuite {
  private def run(args: String*): (Int, String, String) = Cli.run(args: _*)

  // `bench` and its commands: loader-bench's BenchCommandLineSuite (loader-bench installs them)
  private val commands = Seq(Seq("demo"), Seq("gen-sample"), Seq("preprocess"), Seq("feed"),
    Seq("import-fashion-mnist"), Seq("example"), Seq("example", "fashion-mnist"), Seq("config"))

  test("help prints every command and exits 0; no command, or an unknown one, is a usage error (2)") {
    val (code, out, _) = run("help")
    assert(code == 0)
    for (c <- commands.filter(_.size == 1)) assert(out.contains("\n  " + c.head + " "), c)
    assert(out.contains("Exit codes: 0 done, 1 the job failed, 2 a usage error"))
    val (none, _, noneErr) = run()
    assert(none == 2 && noneErr.contains("Usage: spindle"))
    val (bogus, _, bogusErr) = run("bogus")
    assert(bogus == 2 && bogusErr.contains("Unknown command 'bogus' for 'spindle' (commands: demo,"))
  }

  test("a built-in command runs on a tree of that command alone, with the same help; help on the whole") {
    import scala.jdk.CollectionConverters._
    val whole = SpindleMain.commandLine()
    val names = whole.getSubcommands.keySet.asScala.toSeq
    assert(names.take(5) == Seq("demo", "gen-sample", "preprocess", "feed", "train") && names.last == "help")
    for (name <- names.filter(_ != "help")) {
      val one = SpindleMain.commandLine(name)
      assert(one.getSubcommands.keySet.asScala.toSeq == Seq(name))
      def usage(c: picocli.CommandLine) = c.getSubcommands.get(name).getUsageMessage(picocli.CommandLine.Help.Ansi.OFF)
      assert(usage(one) == usage(whole), name)
    }
    assert(SpindleMain.commandLine("train").getSubcommands.get("train").isStopAtPositional)
    for (first <- Seq("help", "bogus", "--version", null)) {
      assert(SpindleMain.commandLine(first).getSubcommands.keySet.asScala.toSeq == names, String.valueOf(first))
    }
  }

  test("without loader-bench, bench is an unknown command that says where the benchmarks are") {
    val (code, out, err) = run("bench", "images", "--input", "x")
    assert(code == 2 && out.isEmpty, err)
    assert(err.startsWith("spindle: Unknown command 'bench' for 'spindle' (commands: demo,"), err)
    assert(err.contains("; benchmarks are in the loader-bench module, which the shaded jar leaves" +
      " out: run them with bin/spindle bench\n"), err)
    assert(!err.contains("Did you mean"), err)
    val (help, helpOut, _) = run("help")
    assert(help == 0 && !helpOut.contains("\n  bench "), helpOut)
    val (other, _, otherErr) = run("bogus")
    assert(other == 2 && !otherErr.contains("loader-bench"), otherErr)
  }

  test("every command prints its usage with --help and through help, exit 0") {
    for (c <- commands) {
      val (code, out, err) = run(c :+ "--help": _*)
      assert(code == 0, s"$c: $err")
      assert(out.contains("Usage: spindle " + c.mkString(" ")), out)
    }
    val (code, out, _) = run("help", "feed")
    assert(code == 0 && out.contains("--world-size=W") && out.contains("--serve"))
    // the defaults shown are the keys' own
    assert(out.replaceAll("\\s+", " ").contains("(spark.spindle.batchSize; default 256)"), out)
  }

  test("every value is refused before Spark starts, naming the flag or key, the value and what is allowed") {
    // --master would fail to start Spark: each case must be refused before that, with exit 2
    val spark = Seq("--master", "no-such-master://x")
    val job = Seq("--input", "/nonexistent", "--output", "/nonexistent-out")
    val cases = Seq(
      (Seq("preprocess") ++ job ++ Seq("--batch-size", "abc"),
        "Invalid value for --batch-size: 'abc' (must be an integer > 0)"),
      (Seq("preprocess") ++ job ++ Seq("--batch-size", "0"),
        "Invalid value for --batch-size: '0' (must be an integer > 0)"),
      (Seq("preprocess") ++ job ++ Seq("--size", "-1"),
        "Invalid value for --size: '-1' (must be an integer > 0)"),
      (Seq("preprocess") ++ job ++ Seq("--threads", "many"),
        "Invalid value for --threads: 'many' (must be an integer >= 0)"),
      (Seq("preprocess") ++ job ++ Seq("--conf", "spark.spindle.maxFailures=lots"),
        "Invalid value for spark.spindle.maxFailures: 'lots' (must be a count >= 0 such as 10, or a" +
          " fraction in [0, 1) such as 0.01 or 1%)"),
      (Seq("preprocess") ++ job ++ Seq("--conf", "spark.spindle.image.transforms=resize(64),blur"),
        "Invalid value for spark.spindle.image.transforms: 'resize(64),blur'"),
      (Seq("preprocess") ++ job ++ Seq("--format", "csv"),
        "Invalid value for --format: 'csv' (must be arrow or parquet)"),
      (Seq("demo", "--batch-size", "x"), "Invalid value for --batch-size: 'x' (must be an integer > 0)"),
      (Seq("feed", "--input", "/nonexistent", "--world-size", "four"),
        "Invalid value for --world-size: 'four' (must be an integer > 0)"),
      (Seq("feed", "--input", "/nonexistent", "--world-size", "2", "--epochs", "0"),
        "Invalid value for --epochs: '0' (must be an integer > 0)"),
      (Seq("feed", "--input", "/nonexistent", "--world-size", "2", "--seed", "x1"),
        "Invalid value for --seed: 'x1' (must be an integer)"),
      (Seq("feed", "--input", "/nonexistent", "--world-size", "2", "--remainder", "SOME"),
        "Invalid value for --remainder: 'SOME' (must be DROP_LAST, PAD or EXACT)"),
      (Seq("feed", "--input", "/nonexistent", "--world-size", "2", "--batch-size", "abc"),
        "Invalid value for --batch-size: 'abc' (must be an integer > 0)"),
      (Seq("feed", "--input", "/nonexistent", "--world-size", "2", "--conf", "spark.spindle.feed.slots=1",
        "--serve"), "Invalid value for spark.spindle.feed.slots: '1' (must be an integer >= 2)"),
      (Seq("import-fashion-mnist", "--output", "/nonexistent", "--limit", "-1"),
        "Invalid value for --limit: '-1' (must be an integer >= 0)"),
      (Seq("example", "fashion-mnist", "--limit", "0"),
        "Invalid value for --limit: '0' (must be an integer > 0)"),
      (Seq("preprocess") ++ job ++ Seq("--bogus"), "Unknown option: '--bogus'"),
      (Seq("preprocess", "--input", "/nonexistent"), "Missing required option: '--output=URI'"))
    for ((args, message) <- cases) {
      val (code, _, err) = run(args ++ spark: _*)
      assert(code == 2, s"$args: $err")
      assert(err.contains("spindle: " + message), s"$args: $err")
      assert(!err.contains("For input string"), err)
    }
    val (code, _, err) = run("gen-sample", "--output", "/nonexistent", "--shards", "0")
    assert(code == 2 && err.contains("Invalid value for --shards: '0' (must be an integer > 0)"), err)
    assert(!Files.exists(java.nio.file.Paths.get("/nonexistent")))
  }

  test("an unknown spark.spindle key from --conf, a properties file or a system property is refused before Spark starts") {
    TestFiles.withTempDir("unknown-key") { dir =>
      // --master would fail to start Spark: each case must be refused before that, with exit 2
      val job = Seq("preprocess", "--input", "/nonexistent", "--output", dir.resolve("out").toString,
        "--master", "no-such-master://x")
      val (code, out, err) = run(job ++ Seq("--conf", "spark.spindle.batchsize=64"): _*)
      assert(code == 2 && out.isEmpty, err)
      assert(err.startsWith("spindle: Unknown key spark.spindle.batchsize (did you mean" +
        " spark.spindle.batchSize?)"), err)
      val file = Files.writeString(dir.resolve("job.conf"), "spark.spindle.maxFailure 10\n")
      val (fromFile, _, fileErr) = run(job ++ Seq("--properties-file", file.toString): _*)
      assert(fromFile == 2 && fileErr.startsWith("spindle: Unknown key spark.spindle.maxFailure" +
        " (did you mean spark.spindle.maxFailures?)"), fileErr)
      System.setProperty("spark.spindle.image.sise", "64") // as spark-submit passes spark-defaults
      try {
        val (fromProperty, _, propertyErr) = run(job: _*)
        assert(fromProperty == 2 && propertyErr.startsWith("spindle: Unknown key" +
          " spark.spindle.image.sise (did you mean spark.spindle.image.size?)"), propertyErr)
      } finally System.clearProperty("spark.spindle.image.sise")
      val (feed, _, feedErr) = run("feed", "--input", "/nonexistent", "--world-size", "2",
        "--conf", "spark.spindle.feed.remainer=PAD", "--master", "no-such-master://x")
      assert(feed == 2 && feedErr.startsWith("spindle: Unknown key spark.spindle.feed.remainer" +
        " (did you mean spark.spindle.feed.remainder?)"), feedErr)
      // allowed: the job goes on (to the input check), other Spark keys are never looked at
      val (allowed, _, allowedErr) = run(job ++ Seq("--conf", "spark.spindle.batchsize=64",
        "--conf", "spark.spindle.allowUnknownKeys=true", "--conf", "spark.unknown.key=1"): _*)
      assert(allowed == 1 && allowedErr.contains("Input does not exist: /nonexistent"), allowedErr)
      assert(!Files.exists(dir.resolve("out")))
    }
  }

  test("a mistyped flag is named with the closest flag of its command, before a missing one") {
    val cases: Seq[(Seq[String], String)] = Seq(
      Seq("preprocess", "--input", "/nonexistent", "--ouptut", "/nonexistent-out") ->
        "Unknown option: '--ouptut' (did you mean --output?)",
      Seq("preprocess", "--input", "/nonexistent", "--ouptut=/nonexistent-out") ->
        "Unknown option: '--ouptut' (did you mean --output?)",
      Seq("preprocess", "--inptu", "/nonexistent", "--output", "/nonexistent-out", "--batch-szie",
        "8") -> ("Unknown options: '--inptu' (did you mean --input?), '--batch-szie' (did you" +
        " mean --batch-size?)"),
      Seq("feed", "--input", "/nonexistent", "--world-szie", "2") ->
        "Unknown option: '--world-szie' (did you mean --world-size?)",
      Seq("train", "--input", "/nonexistent", "--world-size", "2", "--max-restart", "1", "--",
        "train.py") -> "Unknown option: '--max-restart' (did you mean --max-restarts?)",
      Seq("demo", "--outptu", "/nonexistent-out") -> "Unknown option: '--outptu' (did you mean --output?)",
      Seq("gen-sample", "--output", "/nonexistent-out", "--shard", "2") ->
        "Unknown option: '--shard' (did you mean --shards?)",
      Seq("config", "--markdwon") -> "Unknown option: '--markdwon' (did you mean --markdown?)")
    for ((args, message) <- cases) {
      val (code, out, err) = run(args: _*)
      assert(code == 2 && out.isEmpty, s"$args: $err")
      assert(err.startsWith("spindle: " + message + "\n"), s"$args: $err")
      assert(!err.contains("Missing required option"), s"$args: $err")
    }
    assert(!Files.exists(java.nio.file.Paths.get("/nonexistent-out")))
  }

  test("--image-column and --label-column set the Parquet column keys, for preprocess and feed") {
    for (command <- Seq(Seq("preprocess", "--output", "y"), Seq("feed", "--world-size", "2"))) {
      val cl = SpindleMain.commandLine()
      cl.parseArgs(command ++ Seq("--input", "x", "--image-column", "jpeg", "--label-column", "cls"): _*)
      val sub = cl.getSubcommands.get(command.head)
      val conf = JobConf.of(new SparkOptions(), sub)
      sub.getCommand[AnyRef] match {
        case p: PreprocessCommand => p.columns.putInto(conf)
        case f: FeedCommand => f.columns.putInto(conf)
      }
      val settings = conf.checked(sub)
      assert(settings.get(ColumnFlags.IMAGE_COLUMN_KEY) == "jpeg", command)
      assert(settings.get(ColumnFlags.LABEL_COLUMN_KEY) == "cls", command)
      assert(ColumnFlags.IMAGE_COLUMN_KEY == "spark.spindle.parquet.imageColumn")
      assert(ColumnFlags.LABEL_COLUMN_KEY == "spark.spindle.parquet.labelColumn")
    }
  }

  test("a job that fails exits 1 and says why") {
    val (code, _, err) = run("preprocess", "--input", "/nonexistent-input", "--output",
      "/nonexistent-out", "--master", "local[1]")
    assert(code == 1, err)
    assert(err.contains("spindle preprocess failed: Input does not exist: /nonexistent-input"), err)
  }

  test("demo --output keeps committed output unless --overwrite is given, as preprocess does") {
    TestFiles.withTempDir("demo-out") { dir =>
      val in = dir.resolve("in")
      GenSample.run(new GenSample.Options(in.toString, 2, 3, 40, 30, 1L), new Configuration())
      val out = dir.resolve("out")
      val demo = Seq("demo", "--input", in.toString, "--output", out.toString, "--size", "16",
        "--master", "local[2]")
      val (first, firstOut, firstErr) = run(demo: _*)
      assert(first == 0, firstErr)
      assert(firstOut.startsWith("demo: 6 images"), firstOut)
      val manifest = Files.readString(out.resolve("_manifest.json"))
      val (second, _, secondErr) = run(demo: _*)
      assert(second == 1, secondErr)
      assert(secondErr.contains("already holds committed output; pass --overwrite to replace it"),
        secondErr)
      assert(Files.readString(out.resolve("_manifest.json")) == manifest, "output replaced")
      val (third, _, thirdErr) = run(demo :+ "--overwrite": _*)
      assert(third == 0, thirdErr)
      assert(Files.readString(out.resolve("_manifest.json")) != manifest)
    }
  }

  test("config prints every key as spark-defaults.conf or as Markdown") {
    val (code, out, _) = run("config")
    assert(code == 0 && out.contains("spark.spindle.batchSize"))
    val (md, table, _) = run("config", "--markdown")
    assert(md == 0 && table.startsWith("| key | default |"))
    val (both, _, err) = run("config", "--example", "--markdown")
    assert(both == 2 && err.contains("mutually exclusive"), err)
  }
}
