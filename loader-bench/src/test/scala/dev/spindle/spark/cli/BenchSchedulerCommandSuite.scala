package dev.spindle.spark.cli

import java.io.{ByteArrayOutputStream, PrintStream}

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.testkit.TestFiles
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/**
 * `spindle bench scheduler` in this JVM with small task counts: plain and barrier stages run (a
 * barrier stage of N tasks gets N slots) and the report has a row per task count.
 */
class BenchSchedulerCommandSuite extends AnyFunSuite {
  test("plain and barrier stages of each task count, timed per stage and per task") {
    TestFiles.withTempDir("bench-scheduler") { dir =>
      val report = dir.resolve("report.json")
      val err = new ByteArrayOutputStream()
      val code = SpindleMain.run(Array("bench", "scheduler", "--tasks", "3,8", "--repeats", "1",
        "--report", report.toString), new PrintStream(new ByteArrayOutputStream(), true),
        new PrintStream(err, true))
      assert(code == 0, err.toString)
      val rows = new ObjectMapper().readTree(report.toFile).get("stages").asScala.toSeq
      assert(rows.map(_.get("tasks").asInt) == Seq(3, 8))
      for (r <- rows; k <- Seq("plain_s", "barrier_s", "plain_ms_per_task", "barrier_ms_per_task")) {
        assert(r.get(k).asDouble > 0, s"$k in $r")
      }
      val usage = SpindleMain.run(Array("bench", "scheduler", "--tasks", "0"),
        new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true))
      assert(usage == SpindleMain.USAGE)
    }
  }
}
