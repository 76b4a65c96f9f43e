package dev.spindle.spark.pipeline

import java.util.concurrent.{CountDownLatch, ThreadLocalRandom, TimeUnit}

import dev.spindle.spark.pipeline.Fixtures._
import org.scalatest.funsuite.AnyFunSuite

class PipelineOrderSuite extends AnyFunSuite {
  /** Shown in the ScalaTest report and on the console (the JUnit runner hides info). */
  private def note(msg: String): Unit = { info(msg); println(s"[PipelineOrderSuite] $msg") }


  test("input order is preserved through several stages under random per-item delays") {
    val jitter = op[Integer, Integer] { i =>
      Thread.sleep(0, ThreadLocalRandom.current().nextInt(500000))
      if (ThreadLocalRandom.current().nextInt(10) == 0) Thread.sleep(2)
      i
    }
    val out = drain(
      Pipeline.source("read", ints(400))
        .pipe("a", jitter, 8, Order.INPUT)
        .pipe("b", op[Integer, Integer](i => Int.box(i * 2)), 3, Order.INPUT)
        .pipe("c", jitter, 5, Order.INPUT)
        .build().start())
    assert(out == (0 until 400).map(_ * 2))
  }

  test("completion order lets fast items pass a slow one that input order waits for") {
    def run(order: Order): (Int, Boolean) = {
      val release = new CountDownLatch(1)
      val slow = op[Integer, Integer] { i =>
        if (i == 0) release.await(3, TimeUnit.SECONDS)
        i
      }
      val it = Pipeline.source("read", ints(100)).pipe("work", slow, 4, order).build().start()
      var before = 0
      var seenSlow = false
      try {
        while (it.hasNext) {
          val v: Int = it.next()
          if (v == 0) seenSlow = true
          else if (!seenSlow) before += 1
          if (before == 50) release.countDown()
        }
      } finally it.close()
      (before, release.getCount == 0 && before >= 50)
    }
    val t0 = System.nanoTime()
    val (beforeCompletion, releasedByConsumer) = run(Order.COMPLETION)
    val t1 = System.nanoTime()
    val (beforeInput, _) = run(Order.INPUT)
    val t2 = System.nanoTime()
    note(f"completion order: ${(t1 - t0) / 1e6}%.0f ms, input order: ${(t2 - t1) / 1e6}%.0f ms")
    // Completion order delivered fast items while item 0 was still blocked: the consumer itself
    // released it after receiving 50 of them. Input order could deliver nothing before item 0,
    // which only returned when its 3 s wait ran out.
    assert(releasedByConsumer)
    assert(beforeCompletion >= 50)
    assert(beforeInput == 0)
  }

  test("aggregate keeps or drops the last short batch") {
    val keep = drain(Pipeline.source("read", ints(10)).aggregate("batch", 4, LastBatch.KEEP)
      .build().start()).map(_.toArray.toSeq)
    assert(keep == Seq(Seq(0, 1, 2, 3), Seq(4, 5, 6, 7), Seq(8, 9)))
    val drop = drain(Pipeline.source("read", ints(10)).aggregate("batch", 4, LastBatch.DROP)
      .build().start()).map(_.toArray.toSeq)
    assert(drop == Seq(Seq(0, 1, 2, 3), Seq(4, 5, 6, 7)))
  }

  test("stages after an aggregate receive whole batches, still in order") {
    val sums = drain(
      Pipeline.source("read", ints(1000))
        .pipe("square", op[Integer, java.lang.Long](i => Long.box(i.toLong * i)), 4, Order.INPUT)
        .aggregate("batch", 10, LastBatch.KEEP)
        .pipe("sum", op[java.util.List[java.lang.Long], java.lang.Long](b => {
          var s = 0L; b.forEach(x => s += x); Long.box(s)
        }), 3, Order.INPUT)
        .build().start())
    val expected = (0 until 1000).map(i => i.toLong * i).grouped(10).map(_.sum).toSeq
    assert(sums.map(_.longValue) == expected)
  }

  test("an empty source ends the pipeline with no items") {
    val out = drain(Pipeline.source("read", ints(0)).pipe("a", op[Integer, Integer](i => i), 2,
      Order.INPUT).aggregate("b", 3, LastBatch.KEEP).build().start())
    assert(out.isEmpty)
  }
}
