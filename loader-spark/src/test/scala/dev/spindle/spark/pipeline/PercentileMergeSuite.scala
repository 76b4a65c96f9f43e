package dev.spindle.spark.pipeline

import java.util.{List => JList}
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/**
 * Job-wide latency percentiles: a known distribution is recorded by several "tasks" (one
 * StageMeter each, as every Spark task has its own pipeline), their snapshots are merged as the
 * driver merges them, and p50/p90/p99 must be the exact percentiles of the whole distribution
 * within the bucket resolution, which an item-weighted mean of per-task percentiles is not.
 */
class PercentileMergeSuite extends AnyFunSuite {
  private def stats(values: Seq[Long]): PipelineStats = {
    val m = new StageMeter("decode", "pipe", 1)
    values.foreach { v => m.latency.record(v); m.items.increment() }
    new PipelineStats("t", 1, JList.of(m.snapshot()))
  }

  private def exact(sorted: IndexedSeq[Long], p: Double): Long =
    sorted(math.max(1, math.ceil(p * sorted.size).toLong).toInt - 1)

  test("merged task histograms give the whole distribution's percentiles, not a mean of them") {
    // 1..100,000 microseconds, split skewed: one slow task holds the 10% slowest items, nine
    // fast tasks share the rest.
    val all = (1 to 100000).map(_.toLong * 1000)
    val slow = all.drop(90000)
    val fast = all.take(90000).grouped(10000).toSeq
    val tasks = (fast.map(stats) :+ stats(slow)).asJava
    val merged = StatsMerge.merge("preprocess", tasks).stage("decode")
    val sorted = all.toIndexedSeq
    assert(merged.items == 100000)
    assert(merged.latency.total == 100000)
    for ((p, got) <- Seq(0.5 -> merged.p50Ms, 0.9 -> merged.p90Ms, 0.99 -> merged.p99Ms)) {
      val want = exact(sorted, p) / 1e6
      assert(math.abs(got - want) / want <= LatencyBuckets.RELATIVE_ERROR, s"p$p: $got vs $want ms")
    }
    // What the report used to say: the item-weighted mean of each task's own p99 (~47 ms here,
    // as nine of ten tasks never see anything slower than 90 ms).
    val perTask = tasks.asScala.map(_.stage("decode"))
    val meanP99 = perTask.map(s => s.p99Ms * s.items).sum / 100000
    val trueP99 = exact(sorted, 0.99) / 1e6
    assert(math.abs(meanP99 - trueP99) / trueP99 > 0.3, s"mean of p99s $meanP99 vs $trueP99")
  }

  test("bucket merge adds counts per bucket and keeps them in ascending order") {
    val a = new LatencyBuckets(Array(3, 40, 100), Array(1L, 2L, 3L))
    val b = new LatencyBuckets(Array(40, 200), Array(5L, 7L))
    val m = LatencyBuckets.merge(java.util.Arrays.asList(a, null, b, LatencyBuckets.EMPTY))
    assert(m.index.toSeq == Seq(3, 40, 100, 200))
    assert(m.count.toSeq == Seq(1L, 7L, 3L, 7L))
    assert(m.total == 18)
    assert(LatencyBuckets.EMPTY.percentileNanos(0.5) == 0)
    val e = intercept[IllegalArgumentException](new LatencyBuckets(Array(1), Array()))
    assert(e.getMessage.contains("1 indexes but 0 counts"))
  }
}
