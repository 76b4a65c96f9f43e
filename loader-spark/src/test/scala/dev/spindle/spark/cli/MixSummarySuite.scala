package dev.spindle.spark.cli

import java.nio.file.Files

import dev.spindle.spark.example.GenSample
import dev.spindle.spark.metrics.JobReport
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** `bin/spindle feed --mix` as a user runs it: its own session, the summary line and the report. */
class MixSummarySuite extends AnyFunSuite {
  test("feed --mix: the summary line gives each source's realised and asked proportion") {
    TestFiles.withTempDir("summary-mix") { dir =>
      val (a, b) = (dir.resolve("a"), dir.resolve("b"))
      GenSample.run(new GenSample.Options(a.toString, 2, 16, 48, 32, 5L), new Configuration())
      GenSample.run(new GenSample.Options(b.toString, 1, 16, 48, 32, 6L), new Configuration())
      val report = dir.resolve("report.json")
      val (code, out, err) = Cli.run("feed", "--mix", s"web=3:$a", "--mix", s"books=1:$b",
        "--world-size", "2", "--size", "16", "--batch-size", "4", "--master", "local[2]",
        "--progress", "never", "--report", report.toString)
      assert(code == 0, err)
      // 48 samples (32 + 16) at 3:1: 36 of web, 12 of books, 6 batches of 4 per rank
      assert(out.trim.startsWith("feed: 48 images (0 quarantined) in "), out)
      assert(out.contains(", mixed web 75.0% (asked 75.0%) books 25.0% (asked 25.0%)"), out)
      val mix = JobReport.read(report).get("mix").asInstanceOf[java.util.Map[String, AnyRef]]
      assert(mix.get("epoch_samples") == 48)
      assert(Files.exists(a.resolve("_spindle_manifest.json")) && Files.exists(b.resolve("_spindle_manifest.json")))
    }
  }
}
