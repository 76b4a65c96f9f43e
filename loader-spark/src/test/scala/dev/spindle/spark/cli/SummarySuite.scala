package dev.spindle.spark.cli

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.example.GenSample
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** The one-line summaries say what a stop, a save, a resume did, and where quarantined samples are. */
class SummarySuite extends AnyFunSuite {
  private def run(args: String*): (Int, String, String) = Cli.run(args: _*)

  test("feed --stop-after-batches --save-state, then --resume: the summaries say where each stopped and started") {
    TestFiles.withTempDir("summary-feed") { dir =>
      val in = dir.resolve("in")
      GenSample.run(new GenSample.Options(in.toString, 2, 16, 48, 32, 5L), new Configuration())
      val state = dir.resolve("state.json")
      val common = Seq("feed", "--input", in.toString, "--world-size", "2", "--size", "16",
        "--batch-size", "4", "--master", "local[2]", "--progress", "never")
      val (code, out, err) = run(common ++ Seq("--stop-after-batches", "3", "--save-state",
        state.toString): _*)
      assert(code == 0, err)
      assert(out.trim.startsWith("feed: 24 images (0 quarantined) in "), out)
      assert(out.trim.endsWith(
        s"; stopped after 3 batches per rank, next: epoch 0, batch 3; state written to $state"), out)
      val (code2, out2, err2) = run(common ++ Seq("--resume", state.toString): _*)
      assert(code2 == 0, err2)
      assert(out2.trim.startsWith("feed: 8 images (0 quarantined) in "), out2)
      assert(out2.trim.endsWith(s"; resumed at epoch 0, batch 3 from $state"), out2)
    }
  }

  test("quarantined samples: the summary names the report and the list beside it, or the flag that writes them") {
    val fields = Map[String, Object]("command" -> "preprocess", "images" -> Long.box(97),
      "failures" -> Long.box(3), "wall_s" -> Double.box(2.0), "images_per_s" -> Double.box(48.5),
      "output" -> "file:/out").asJava
    val report = Paths.get("/tmp/r/report.json")
    assert(Summary.line(fields, report, java.util.List.of()) == "preprocess: 97 images (3 quarantined, listed"
      + " in /tmp/r/report.json (key \"quarantine\") and /tmp/r/report.quarantine.jsonl) in 2.00 s,"
      + " 48.5 images/s -> file:/out")
    assert(Summary.line(fields, null, java.util.List.of("state written to s.json")) == "preprocess: 97 images"
      + " (3 quarantined, listed with --report FILE) in 2.00 s, 48.5 images/s -> file:/out;"
      + " state written to s.json")
    val clean = new java.util.HashMap[String, Object](fields)
    clean.put("failures", Long.box(0))
    assert(Summary.line(clean, report, java.util.List.of()).startsWith("preprocess: 97 images (0 quarantined) in"))
  }

  test("files of the input that were not read: the summary counts them and says where they are listed") {
    val fields = Map[String, Object]("command" -> "preprocess", "images" -> Long.box(20),
      "failures" -> Long.box(0), "input_skipped_total" -> Int.box(3), "wall_s" -> Double.box(2.0),
      "images_per_s" -> Double.box(10.0), "output" -> "file:/out").asJava
    assert(Summary.line(fields, Paths.get("/tmp/r.json"), java.util.List.of()) == "preprocess: 20 images"
      + " (0 quarantined), 3 input files not read (listed in /tmp/r.json, key \"input_skipped\") in 2.00 s,"
      + " 10.0 images/s -> file:/out")
    TestFiles.withTempDir("summary-skipped") { dir =>
      val in = dir.resolve("in")
      for ((f, i) <- Seq("a/x.jpg", "b/y.jpg").zipWithIndex) {
        Files.createDirectories(in.resolve(f).getParent)
        Files.write(in.resolve(f), dev.spindle.spark.preprocess.TestSamples.jpeg(1L, i, 32, 24))
      }
      Files.write(in.resolve("a/notes.txt"), "notes".getBytes("UTF-8"))
      val (code, out, err) = run("preprocess", "--input", in.toString, "--output", dir.resolve("out").toString,
        "--size", "8", "--master", "local[1]", "--progress", "never")
      assert(code == 0, err)
      assert(out.trim.startsWith("preprocess: 2 images (0 quarantined), 1 input files not read (listed with" +
        " --report FILE) in "), out)
    }
  }
}
