package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.preprocess.TestSamples
import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/**
 * `preprocess --trace FILE` and `feed --trace FILE` through the command line on embedded Spark: the executor plugin
 * (the driver, in local mode) writes FILE, read back with Jackson, with spans of every stage the
 * job's report names.
 */
class TraceCommandSuite extends AnyFunSuite {
  test("preprocess --trace writes a Chrome trace with spans of every stage of the report") {
    TestFiles.withTempDir("trace-cli") { dir =>
      TestSamples.generate(dir.resolve("in"), 2, 20, 64, 48, 7)
      val trace = dir.resolve("trace.json")
      val report = dir.resolve("report.json")
      val err = new ByteArrayOutputStream()
      val code = SpindleMain.run(Array("preprocess", "--input", dir.resolve("in").toString,
        "--output", dir.resolve("out").toString, "--size", "32", "--master", "local[2]",
        "--report", report.toString, "--trace", trace.toString),
        new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true))
      assert(code == 0, err.toString)
      val mapper = new ObjectMapper()
      val stages = mapper.readTree(report.toFile).get("stages").asScala.map(_.get("name").asText).toSeq
      assert(stages.size >= 3, stages)
      val events = mapper.readTree(trace.toFile).get("traceEvents").asScala.toSeq
      val spans = events.filter(_.get("ph").asText == "X")
      for (s <- stages) assert(spans.exists(_.get("name").asText == s), s"no span of stage $s")
      assert(events.exists(_.get("ph").asText == "M"), "threads are named")
      assert(events.exists(_.get("ph").asText == "C"), "queue counters")

      val feedTrace = dir.resolve("feed-trace.json")
      val feed = SpindleMain.run(Array("feed", "--input", dir.resolve("out").toString,
        "--world-size", "1", "--batch-size", "8", "--master", "local[2]",
        "--trace", feedTrace.toString),
        new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true))
      assert(feed == 0, err.toString)
      val feedSpans = mapper.readTree(feedTrace.toFile).get("traceEvents").asScala
        .filter(_.get("ph").asText == "X").map(_.get("name").asText).toSet
      assert(feedSpans.size >= 2 && feedSpans.contains("sink"), feedSpans)
    }
  }
}
