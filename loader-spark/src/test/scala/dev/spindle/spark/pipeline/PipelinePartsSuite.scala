package dev.spindle.spark.pipeline

import java.util.concurrent.atomic.AtomicInteger

import dev.spindle.spark.pipeline.Fixtures._
import org.scalatest.funsuite.AnyFunSuite

/** The engine's building blocks on their own: the bounded queue and the latency histogram. */
class PipelinePartsSuite extends AnyFunSuite {
  private def entry(bytes: Long, seq: Long = 0) = new Entry(Int.box(seq.toInt), seq, bytes)

  test("a queue refuses entries past its item or byte bound and wakes the refused producer") {
    val producerWakes = new AtomicInteger
    val consumerWakes = new AtomicInteger
    val q = new ItemQueue(3, 100)
    q.wire(() => producerWakes.incrementAndGet(), () => consumerWakes.incrementAndGet())
    assert(q.offer(entry(60)))
    assert(consumerWakes.get == 1, "the first offer wakes a consumer that never polled")
    assert(!q.offer(entry(50)), "60 + 50 bytes exceed the 100-byte bound")
    assert(q.offer(entry(40)))
    assert(!q.offer(entry(1)), "100 bytes held: even 1 more byte is refused")
    assert(producerWakes.get == 0)
    assert(q.poll().bytes == 60)
    assert(producerWakes.get == 1, "taking an entry wakes the refused producer")
    assert(q.offer(entry(0)) && q.offer(entry(0)))
    assert(!q.offer(entry(0)), "3 items held: the item bound refuses a 4th")
    assert(q.peakItems == 3 && q.peakBytes == 100)
  }

  test("a refused producer is woken once the queue is down to half its bounds, not per item") {
    val producerWakes = new AtomicInteger
    val q = new ItemQueue(8, 1000)
    q.wire(() => producerWakes.incrementAndGet(), () => ())
    (0 until 8).foreach(i => assert(q.offer(entry(10, i))))
    assert(!q.offer(entry(10, 8)))
    (0 until 3).foreach { _ => q.poll() }
    assert(producerWakes.get == 0, "5 of 8 items still held")
    q.poll()
    assert(producerWakes.get == 1, "4 of 8 items: half")
    q.poll()
    assert(producerWakes.get == 1, "woken once per refusal")
    // the byte bound too: 2 items of 400 bytes are under half the items but over half the bytes
    val bytesQ = new ItemQueue(8, 1000)
    bytesQ.wire(() => producerWakes.incrementAndGet(), () => ())
    (0 until 2).foreach(i => assert(bytesQ.offer(entry(400, i))))
    assert(!bytesQ.offer(entry(400, 2)))
    bytesQ.poll()
    assert(producerWakes.get == 2, "400 of 1000 bytes: half")
    assert(bytesQ.offer(entry(400, 2)) && bytesQ.offer(entry(200, 3)))
    assert(!bytesQ.offer(entry(1, 4)), "1000 bytes held")
    bytesQ.poll()
    assert(producerWakes.get == 2, "2 of 8 items, but 600 of 1000 bytes still held")
    bytesQ.poll()
    assert(producerWakes.get == 3, "200 of 1000 bytes")
  }

  test("an entry larger than the byte bound passes alone, so it cannot wedge the pipeline") {
    val q = new ItemQueue(10, 100)
    assert(q.offer(entry(1000)))
    assert(!q.offer(entry(1)))
    assert(q.poll().bytes == 1000)
    assert(q.offer(entry(1)))
  }

  test("an empty queue wakes its consumer on the next offer and reports the end once drained") {
    val consumerWakes = new AtomicInteger
    val q = new ItemQueue(4, 1000)
    q.wire(() => (), () => consumerWakes.incrementAndGet())
    assert(q.poll() == null)
    q.offer(entry(1, 7))
    assert(consumerWakes.get == 1)
    q.end()
    assert(!q.drained(), "ended but one entry left")
    assert(q.poll().seq == 7)
    assert(q.drained())
  }

  test("a closed queue releases what it holds and everything offered later") {
    val open = new AtomicInteger
    val q = new ItemQueue(4, 1000)
    val held = new Tracked(1, open)
    q.offer(new Entry(held, 0, 0))
    q.close()
    assert(held.isClosed && q.drained())
    val late = new Tracked(2, open)
    assert(q.offer(new Entry(late, 1, 0)))
    assert(late.isClosed && open.get == 0)
  }

  test("queue occupancy is the fraction of time the queue held an entry") {
    val q = new ItemQueue(4, 1000)
    Thread.sleep(50)
    q.offer(entry(1))
    Thread.sleep(50)
    val occupancy = q.occupancy()
    // Empty for its first 50 ms, then holding an entry: strictly between 0 and 1 however the
    // sleeps stretch on a loaded machine.
    assert(occupancy > 0 && occupancy < 1, occupancy)
    q.poll()
    assert(new ItemQueue(4, 1000).occupancy() == 0)
  }

  test("histogram percentiles are within a few percent of the exact values") {
    val h = new LatencyHistogram
    val values = (1 to 100000).map(i => i.toLong * 1000) // 1 us .. 100 ms, uniform
    scala.util.Random.shuffle(values).foreach(h.record)
    for ((p, exact) <- Seq(0.5 -> 50000000L, 0.9 -> 90000000L, 0.99 -> 99000000L)) {
      val got = h.percentile(p)
      assert(math.abs(got - exact).toDouble / exact < 0.04, s"p$p: $got vs $exact")
    }
    assert(new LatencyHistogram().percentile(0.5) == 0)
    for (v <- Seq(0L, 1L, 15L, 16L, 17L, 1000L, 123456789L, Long.MaxValue)) {
      val mid = LatencyHistogram.midpoint(LatencyHistogram.index(v))
      assert(math.abs(mid.toDouble - v) <= v / 16.0 + 1, s"$v -> $mid")
    }
  }
}
