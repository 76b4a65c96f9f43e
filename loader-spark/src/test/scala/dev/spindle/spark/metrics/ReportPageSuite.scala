package dev.spindle.spark.metrics

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.file.{Files, Path, StandardCopyOption}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.cli.{SpindleMain, TrainCommand}
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.train.TrainRuns
import dev.spindle.spark.example.GenSample
import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.testkit.{BadImages, Chromium, SparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** `spindle report` pages loaded in a real headless Chromium: no console errors, charts drawn. */
class ReportPageSuite extends AnyFunSuite with SparkFixture {
  private val hostile = "</script><script>document.title='pwned'</script><b>bold</b>"

  private def requireChromium(): Unit = if (Chromium.binary.isEmpty) {
    val msg = "chromium is not installed (bin/setup-test-deps installs Debian's chromium)"
    if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
  }

  private def cli(args: String*): (Int, String) = {
    val out = new ByteArrayOutputStream()
    val code = SpindleMain.run(args.toArray, new PrintStream(out, true), new PrintStream(out, true))
    (code, out.toString)
  }

  /** Loads the page: the script set its marker, drew `charts` canvases, logged nothing. */
  private def checkInBrowser(page: Path, charts: Int, dir: Path): String = {
    val run = Chromium.dumpDom(page, dir.resolve("profile"))
    assert(run.console.isEmpty, run.console.mkString("\n"))
    assert(run.stdout.contains("data-rendered=\"ok\""), run.stdout.take(2000))
    assert("<canvas".r.findAllIn(run.stdout).size == charts, run.stdout.take(2000))
    // report strings stay text: no injected script ran, no injected element exists
    assert(run.stdout.contains("<title>Spindle ") && !run.stdout.contains("<b>bold</b>"))
    run.stdout
  }

  test("a real preprocess run's report renders with its timeline, stages and quarantine table") {
    requireChromium()
    TestFiles.withTempDir("report-page") { dir =>
      val in = dir.resolve("in")
      GenSample.run(new GenSample.Options(in.toString, 6, 40, 160, 120, 5L), new Configuration())
      TestFiles.writeTar(in.resolve("shard-bad.tar"), Seq(
        s"bad$hostile.jpg" -> BadImages.garbage(300), s"bad$hostile.cls" -> TestFiles.ascii("1")))
      val conf = Map("spark.spindle.image.size" -> "64", "spark.spindle.partitionBytes" -> "1",
        "spark.spindle.maxFailures" -> "5")
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false, conf.asJava)
      val json = dir.resolve("report.json")
      report.write(json)

      val (code, out) = cli("report", json.toString)
      assert(code == 0, out)
      val page = dir.resolve("report.html")
      val html = Files.readString(page)
      assert(html.contains("bad&lt;/script&gt;&lt;script&gt;"), "the key is escaped in the table")
      assert(!html.contains(hostile) && !html.contains("<script src") && !html.contains("<link"))
      assert(html.contains("Bottleneck stage: <strong>" + report.get("bottleneck") + "</strong>"))

      val dom = checkInBrowser(page, charts = 3, dir)
      assert(dom.contains("Throughput over time") && dom.contains("Stage latency"))
      val shot = dir.resolve("shot.png")
      val run = Chromium.screenshot(page, shot, dir.resolve("profile"))
      assert(run.console.isEmpty, run.console.mkString("\n"))
      assert(Files.size(shot) > 30_000, s"a blank screenshot is smaller: ${Files.size(shot)} bytes")
      Files.createDirectories(Path.of("target"))
      Files.copy(shot, Path.of("target", "report-screenshot.png"), StandardCopyOption.REPLACE_EXISTING)
    }
  }

  test("a feed-like report without timeline or stages still renders, with its feeder charts") {
    requireChromium()
    TestFiles.withTempDir("report-feed") { dir =>
      val slots = Map("series_columns" -> List("ms", "FREE", "FILLED").asJava,
        "series" -> List(List(0, 4, 0).asJava, List(10, 2, 2).asJava, List(20, 1, 3).asJava).asJava)
      val stats = Map[String, Object]("h2d_gbps" -> Double.box(11.5), "wall_gbps" -> Double.box(3.2),
        "consumer_wait_ms_per_batch" -> Double.box(0.4), "producer_blocked_ms_per_batch" -> Double.box(2.0),
        "slots" -> slots.asJava)
      val feeder = Map[String, Object]("executor" -> hostile, "device" -> "cuda:0", "stats" -> stats.asJava)
      val r = new JobReport("feed").put("world_size", 2).put(hostile, hostile)
        .put("feeders", List(feeder.asJava).asJava)
        .put("quarantine", List(Map("shard" -> hostile, "key" -> "k", "index" -> 3, "reason" -> hostile).asJava).asJava)
      val json = dir.resolve("feed.json")
      r.write(json)
      val page = dir.resolve("pages/feed-page.html")
      val (code, out) = cli("report", json.toString, "--html", page.toString)
      assert(code == 0, out)
      val dom = checkInBrowser(page, charts = 3, dir)
      assert(dom.contains("This report has no timeline.") && dom.contains("Feeder slots over time"))
    }
  }

  test("a real train run's report shows its trainers: per rank wait, step time, restarts") {
    requireChromium()
    assume(TrainRuns.torchAvailable, s"${TrainRuns.Python} cannot import torch")
    TestFiles.withTempDir("report-train") { dir =>
      val out = Files.createDirectories(dir.resolve("out"))
      val in = FeedData.tars(dir.resolve("in"), Seq(13, 7, 25))
      val r = TrainCommand.run(spark, Array("--input", in.toString, "--size", "8", "--world-size", "2",
        "--batch-size", "4", "--remainder", "PAD", "--python", TrainRuns.Python, "--",
        TrainRuns.Script.toString, out.toString))
      val json = dir.resolve("train.json")
      r.writeTo(json)
      val page = dir.resolve("train.html")
      val (code, printed) = cli("report", json.toString)
      assert(code == 0, printed)
      val feeders = r.fields().get("feeders").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      val slotCharts = feeders.count(f => f.get("stats").asInstanceOf[java.util.Map[String, Object]]
        .get("slots").asInstanceOf[java.util.Map[String, Object]].get("series").asInstanceOf[java.util.List[_]]
        .size > 0)
      // timeline, trainers, the feeders' bandwidth and wait, one slot chart per feeder with a series
      val dom = checkInBrowser(page, charts = 1 + 1 + 2 + slotCharts, dir)
      assert(dom.contains("<h2>Trainers</h2>"), dom.take(3000))
      val table = "<table class=\"trainers\">.*?</table>".r.findFirstIn(dom.replace("\n", "")).get
      for (col <- Seq("rank", "wait s", "step s (mean)", "restarts", "failures")) {
        assert(table.contains(s"<th>$col</th>"), table)
      }
      val trainers = r.fields().get("trainers").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(trainers.map(_.get("steps")) == Seq(6L, 6L) && trainers.forall(_.get("restarts") == 0))
      assert("<tr><td>1</td><td>ok</td><td>0</td><td>6</td>".r.findFirstIn(table).isDefined, table)
    }
  }

  test("a missing report names the file and exits 1") {
    val (code, out) = cli("report", "/nonexistent/r.json")
    assert(code == 1 && out.contains("/nonexistent/r.json"), out)
  }
}
