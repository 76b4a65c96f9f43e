package dev.spindle.spark.cli

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.train.TrainRuns
import dev.spindle.spark.example.GenSample
import dev.spindle.spark.metrics.JobReport
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * Mistakes in paths that need no cluster to find are reported before the Spark session starts; a
 * job that fails leaves no output folder it created and still writes its `--report`, saying why.
 */
class FailFastSuite extends AnyFunSuite {
  /** A master Spark cannot start on: a check made after the session starts would fail on it. */
  private val noSpark = Seq("--master", "no-such-master://x")

  private def gen(dir: Path): Path = {
    GenSample.run(new GenSample.Options(dir.toString, 1, 3, 40, 30, 1L), new Configuration())
    dir
  }

  test("input, output, --report, --resume, --save-state, --manifest and --state-dir are checked before Spark starts") {
    TestFiles.withTempDir("fail-fast") { dir =>
      val in = gen(dir.resolve("in"))
      val empty = Files.createDirectories(dir.resolve("empty"))
      Files.createDirectories(empty.resolve("_spark_metadata")) // hidden: not read
      val committed = Files.createDirectories(dir.resolve("committed"))
      Files.writeString(committed.resolve("_manifest.json"), "{}")
      val file = Files.writeString(dir.resolve("file"), "x")
      val state = Files.writeString(dir.resolve("state.json"), "{\"format\": \"other\"}")
      val script = Files.writeString(dir.resolve("train.py"), "print('hi')\n")
      val out = dir.resolve("out").toString
      def preprocess(args: String*) = Seq("preprocess", "--input", in.toString, "--output", out) ++ args
      def feed(args: String*) = Seq("feed", "--input", in.toString, "--world-size", "2") ++ args
      // the trainers' Python passes train's own check (it imports torch), so the paths are what fail
      def train(args: String*) = Seq("train", "--input", in.toString, "--world-size", "2",
        "--python", TrainRuns.Python) ++ args ++ Seq("--", script.toString)
      val cases: Seq[(Seq[String], String)] = Seq(
        Seq("preprocess", "--input", s"$dir/typo", "--output", out) ->
          s"spindle preprocess failed: Input does not exist: $dir/typo",
        Seq("preprocess", "--input", empty.toString, "--output", out) ->
          s"spindle preprocess failed: No shards under $empty: the folder is empty",
        Seq("preprocess", "--input", in.toString, "--output", committed.toString) ->
          (s"spindle preprocess failed: Output $committed already holds committed output; pass" +
            " --overwrite to replace it"),
        Seq("preprocess", "--input", in.toString, "--output", file.toString) ->
          s"spindle preprocess failed: Output $file is a file, not a folder",
        Seq("preprocess", "--input", in.toString, "--output", s"$file/out") ->
          s"spindle preprocess failed: Output $file/out cannot be created: $file is a file",
        preprocess("--report", s"$file/r.json") ->
          s"spindle preprocess failed: --report $file/r.json cannot be written: $file is a file",
        preprocess("--report", dir.toString) ->
          s"spindle preprocess failed: --report $dir is a folder, not a file",
        Seq("demo", "--input", s"$dir/typo", "--output", out) ->
          s"spindle demo failed: Input does not exist: $dir/typo",
        Seq("feed", "--input", s"$dir/typo", "--world-size", "2") ->
          s"spindle feed failed: Input does not exist: $dir/typo",
        feed("--resume", s"$dir/nope.json") -> s"spindle feed failed: Resume state not found: $dir/nope.json",
        feed("--resume", state.toString) ->
          (s"spindle feed failed: Cannot resume from $state: Invalid loader state: format" +
            " \"other\" (expected \"spindle-loader-state/1\")"),
        feed("--stop-after-batches", "1", "--save-state", s"$file/s.json") ->
          s"spindle feed failed: --save-state $file/s.json cannot be written: $file is a file",
        feed("--manifest", dir.toString) -> s"spindle feed failed: --manifest $dir is a folder, not a file",
        train("--state-dir", file.toString) -> s"spindle train failed: --state-dir $file is a file, not a folder")
      for ((args, message) <- cases) {
        val (code, stdout, err) = Cli.run(args ++ noSpark: _*)
        assert(code == 1 && stdout.isEmpty, s"$args: $err")
        assert(err.linesIterator.contains(message), s"$args: $err")
      }
      // a master that needs a state directory every node can use: a usage error, before Spark starts
      val (code, _, err) = Cli.run(train("--master", "spark://127.0.0.1:1"): _*)
      assert(code == 2, err)
      assert(err.startsWith("spindle: train on master spark://127.0.0.1:1 needs --state-dir"), err)
      assert(!Files.exists(dir.resolve("out")))
      assert(Files.readString(committed.resolve("_manifest.json")) == "{}")
    }
  }

  test("a failed job leaves no output folder it created and writes --report with the failure") {
    TestFiles.withTempDir("fail-report") { dir =>
      val notes = Files.createDirectories(dir.resolve("notes"))
      Files.writeString(notes.resolve("notes.txt"), "no shards here") // found out by the job, on Spark
      val report = dir.resolve("reports/preprocess.json")
      val (code, _, err) = Cli.run("preprocess", "--input", notes.toString, "--output",
        dir.resolve("new/a/out").toString, "--report", report.toString, "--master", "local[1]", "--no-ui")
      assert(code == 1, err)
      assert(err.contains(s"spindle preprocess failed: No shards under $notes"), err)
      assert(!Files.exists(dir.resolve("new")), "the job left the output folders it created")
      val failed = JobReport.read(report).asScala
      assert(failed("command") == "preprocess" && failed("status") == "failed" && failed("exit_code") == 1)
      assert(failed("error").toString.startsWith(s"No shards under $notes"), failed)

      val existing = Files.createDirectories(dir.resolve("existing"))
      val (again, _, againErr) = Cli.run("preprocess", "--input", notes.toString, "--output",
        existing.toString, "--master", "local[1]", "--no-ui")
      assert(again == 1, againErr)
      assert(Files.isDirectory(existing) && Files.list(existing).count() == 0, "an existing folder is kept")

      val feedReport = dir.resolve("feed.json")
      val (feed, _, feedErr) = Cli.run("feed", "--input", notes.toString, "--world-size", "2",
        "--stop-after-batches", "1", "--save-state", dir.resolve("states/s.json").toString,
        "--report", feedReport.toString, "--master", "local[1]", "--no-ui")
      assert(feed == 1, feedErr)
      assert(!Files.exists(dir.resolve("states")))
      val feedFailed = JobReport.read(feedReport).asScala
      assert(feedFailed("command") == "feed" && feedFailed("status") == "failed", feedFailed)
      assert(feedFailed("error").toString.contains(s"No shards under $notes"), feedFailed)

      val ok = dir.resolve("ok.json")
      val (done, _, doneErr) = Cli.run("preprocess", "--input", gen(dir.resolve("in")).toString,
        "--output", dir.resolve("arrow").toString, "--size", "16", "--report", ok.toString,
        "--master", "local[1]", "--no-ui")
      assert(done == 0, doneErr)
      assert(JobReport.read(ok).get("status") == "ok")
    }
  }
}
