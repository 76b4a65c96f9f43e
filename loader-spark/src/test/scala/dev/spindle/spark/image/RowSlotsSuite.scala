package dev.spindle.spark.image

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite

class RowSlotsSuite extends AnyFunSuite {

  private def withSlots(body: (RowSlots, RootAllocator) => Unit): Unit = {
    val allocator = new RootAllocator(1L << 30)
    try {
      val slots = new RowSlots(allocator, 4, 16, 2)
      try body(slots, allocator)
      finally slots.close()
    } finally allocator.close() // fails if a buffer leaked
  }

  test("the rows of one buffer, in order, are that buffer; rows write where they belong") {
    withSlots { (slots, _) =>
      slots.restart(10)
      val rows = (0 until 4).map(p => slots.claim(p))
      rows.zipWithIndex.foreach { case (r, i) => r.buffer().setByte(r.offset(), i + 1) }
      val whole = slots.whole(rows.asJava)
      assert(whole != null)
      assert((0 until 4).map(i => whole.getByte(i * 16L)) == Seq[Byte](1, 2, 3, 4))
      assert(slots.whole(rows.take(3).asJava) == null, "not all rows of the buffer")
      assert(slots.whole(rows.reverse.asJava) == null, "out of order")
      rows.foreach(_.close())
      rows.foreach(_.close()) // twice is harmless
    }
  }

  test("a failed position shifts the grouping: no whole buffer, and buffers are still freed") {
    withSlots { (slots, allocator) =>
      slots.restart(10)
      val rows = (0 until 10).map(p => slots.claim(p))
      rows(2).close() // the sample at position 2 failed
      val good = rows.filterNot(_ eq rows(2))
      val first = good.take(4)
      assert(slots.whole(first.asJava) == null, "rows 0, 1, 3 of buffer 0 and row 0 of buffer 1")
      // the last, partial buffer (positions 8, 9) is whole on its own
      assert(slots.whole(rows.drop(8).asJava) != null)
      good.foreach(_.close())
      assert(allocator.getAllocatedMemory <= 2 * 4 * 16, "at most the pool's two buffers kept")
    }
  }

  test("buffers are pooled across restarts; rows still open at close free their buffer later") {
    withSlots { (slots, allocator) =>
      slots.restart(4)
      val a = (0 until 4).map(p => slots.claim(p))
      val buf = a.head.buffer()
      a.foreach(_.close())
      slots.restart(8)
      val b = slots.claim(5)
      assert(b.buffer() eq buf, "pooled buffer reused")
      val unfinished = slots.claim(0) // its batch will never complete: restart orphans it
      slots.restart(4)
      b.close()
      unfinished.close()
      val c = slots.claim(1)
      slots.close()
      assert(allocator.getAllocatedMemory == 4 * 16, "still held by the open row")
      c.close()
      assert(allocator.getAllocatedMemory == 0)
      intercept[IllegalStateException](slots.claim(0))
    }
  }
}
