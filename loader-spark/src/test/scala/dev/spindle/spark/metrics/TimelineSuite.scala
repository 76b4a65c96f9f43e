package dev.spindle.spark.metrics

import scala.jdk.CollectionConverters._

import dev.spindle.spark.example.GenSample

import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

class TimelineSuite extends AnyFunSuite with SparkFixture {
  private def points(start: Long, spans: Seq[TaskTimeline.Span], counts: Int => Timeline.Counts) =
    Timeline.of(start, spans.map(s => new Timeline.Task(s.launchMs, s.finishMs, counts(s.partition))).asJava)
      .asScala.map(_.asScala.toMap)

  test("a task's counts are spread over the seconds it ran; totals add up") {
    val spans = Seq(new TaskTimeline.Span(0, 1000, 3000), new TaskTimeline.Span(1, 2000, 4000))
    val p = points(1000, spans, i => new Timeline.Counts(100, 90 + i, 1000, 10))
    assert(p.map(_("t_s")) == Seq(1.0, 2.0, 3.0))
    assert(p.map(_("samples")) == Seq(50L, 150L, 200L))
    assert(p.map(_("bytes")) == Seq(500L, 1500L, 2000L))
    assert(p.map(_("quarantined")) == Seq(5L, 15L, 20L))
    assert(p.map(_("images_per_s")) == Seq(45.0, 45.0 + 45.5, 45.5))
  }

  test("a long job keeps at most 500 points, wider than a second") {
    val spans = (0 until 2000).map(i => new TaskTimeline.Span(i, i * 1000L, i * 1000L + 3000))
    val p = points(0, spans, _ => new Timeline.Counts(1, 1, 1, 0))
    assert(p.size <= Timeline.MAX_POINTS && p.size > 400)
    assert(p.last("samples") == 2000L)
    assert(p.head("t_s").asInstanceOf[Double] > 1.0)
  }

  test("a preprocess report's timeline ends at the job's totals, fed by the scheduler's task ends") {
    TestFiles.withTempDir("timeline") { dir =>
      val in = dir.resolve("in")
      GenSample.run(new GenSample.Options(in.toString, 4, 12, 96, 64, 3L), new Configuration())
      val conf = Map("spark.spindle.image.size" -> "32", "spark.spindle.partitionBytes" -> "1")
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false, conf.asJava)
      val timeline = report.get("timeline").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(timeline.nonEmpty && timeline.size <= Timeline.MAX_POINTS)
      assert(timeline.last.get("samples") == 48L, timeline)
      assert(timeline.last.get("bytes") == report.get("bytes_in"), timeline)
      val ts = timeline.map(_.get("t_s").asInstanceOf[Double])
      assert(ts == ts.sorted && ts.head >= 1.0)
      assert(timeline.map(_.get("images_per_s").asInstanceOf[Double]).sum > 0)
      assert(spark.sparkContext.getLocalProperty(TaskTimeline.PROPERTY) == null, "property cleared")
    }
  }
}
