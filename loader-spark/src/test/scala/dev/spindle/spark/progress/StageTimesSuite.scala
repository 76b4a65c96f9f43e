package dev.spindle.spark.progress

import scala.jdk.CollectionConverters._

import dev.spindle.spark.pipeline.{LatencyBuckets, PipelineStats, StageStats}
import org.scalatest.funsuite.AnyFunSuite

/** Stage times: from a pipeline's statistics, differences, sums, and the busiest stage. */
class StageTimesSuite extends AnyFunSuite {
  private def stage(name: String, busy: Double) =
    new StageStats(name, "pipe", 1, 10, 0, 0, 0, 0, 0, 0, 0, busy, 0, 0, LatencyBuckets.EMPTY)

  private def stats(elapsedMs: Double, busy: (String, Double)*) =
    new PipelineStats("p", elapsedMs, busy.map { case (n, b) => stage(n, b) }.asJava)

  private def times(m: java.util.Map[String, Array[Long]]) =
    m.asScala.map { case (k, v) => k -> v.toSeq }.toMap

  test("a pipeline's stages: busy share of the elapsed time") {
    val t = StageTimes.of(stats(1000, "read" -> 0.1, "decode" -> 0.95))
    assert(times(t) == Map("read" -> Seq(100L, 1000L), "decode" -> Seq(950L, 1000L)))
  }

  test("the consumer stage takes the name the task gives it: a trainer, not a sink") {
    val s = stats(1000, "read" -> 0.1, "check" -> 0.2, "sink" -> 0.95)
    assert(times(StageTimes.of(s, "trainer")) ==
      Map("read" -> Seq(100L, 1000L), "check" -> Seq(200L, 1000L), "trainer" -> Seq(950L, 1000L)))
    assert(StageTimes.busiest(StageTimes.of(s, "trainer")) == "trainer")
    assert(StageTimes.of(s).containsKey("sink"))
  }

  test("what a task did since its last update; the busiest stage needs 100 ms to be named") {
    val before = StageTimes.of(stats(1000, "read" -> 0.9, "decode" -> 0.5))
    val after = StageTimes.of(stats(2000, "read" -> 0.5, "decode" -> 0.75))
    val delta = StageTimes.minus(after, before)
    assert(times(delta) == Map("read" -> Seq(100L, 1000L), "decode" -> Seq(1000L, 1000L)))
    assert(StageTimes.busiest(delta) == "decode") // over the window, though read led overall
    assert(StageTimes.busiest(before) == "read")
    assert(StageTimes.busiest(StageTimes.of(stats(99, "read" -> 1.0))) == null)
    assert(StageTimes.busiest(java.util.Map.of()) == null)
  }

  test("the accumulator adds tasks' updates and merges copies; the UI shows busy percentages") {
    val acc = new StageTimes()
    assert(acc.isZero)
    acc.add(StageTimes.of(stats(1000, "read" -> 0.2, "decode" -> 0.9)))
    val other = acc.copy()
    other.add(StageTimes.of(stats(1000, "decode" -> 0.5, "batch" -> 0.1)))
    acc.merge(other)
    assert(times(acc.value()) == Map("read" -> Seq(400L, 2000L),
      "decode" -> Seq(2300L, 3000L), "batch" -> Seq(100L, 1000L)))
    assert(acc.value().toString == "batch 10% busy, decode 77% busy, read 20% busy")
    val snapshot = acc.value()
    acc.reset()
    assert(acc.isZero && snapshot.size == 3) // the value is a copy
  }
}
