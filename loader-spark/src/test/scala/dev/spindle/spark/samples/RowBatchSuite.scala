package dev.spindle.spark.samples

import org.apache.arrow.memory.{ArrowBuf, RootAllocator}
import org.scalatest.funsuite.AnyFunSuite

/**
 * A batch that rows are decoded straight into ([[RowBatch]], under the feed's ring slots and Arrow
 * batches and `bench images`' buffers): where each row writes, and when its memory goes back.
 */
class RowBatchSuite extends AnyFunSuite {

  /** A batch of 4 rows of 16 bytes over its own buffer, counting its releases. */
  private final class Counted(buf: ArrowBuf) extends RowBatch(buf, 16, 4) {
    @volatile var releases = 0
    override protected def release(): Unit = {
      releases += 1
      buf.close()
    }
  }

  private def withBatch(body: (Counted, RootAllocator) => Unit): Unit = {
    val allocator = new RootAllocator(1L << 20)
    try body(new Counted(allocator.buffer(4 * 16)), allocator)
    finally allocator.close() // fails if the batch's buffer leaked
  }

  test("each row writes where it belongs: row r at r * rowBytes of the batch's pixels") {
    withBatch { (batch, _) =>
      for (r <- 0 until 4) {
        val target = batch.row(r)
        val buf = target.begin()
        try buf.setByte(target.offset(), r + 1)
        finally target.end()
      }
      assert((0 until 4).map(r => batch.row(r).offset()) == Seq(0L, 16L, 32L, 48L))
      assert((0 until 4).map(r => batch.pixels().getByte(r * 16L)) == Seq[Byte](1, 2, 3, 4))
      batch.giveUp()
      assert(batch.releases == 1)
    }
  }

  test("given up while a row is written, it goes back when that write ends, once") {
    withBatch { (batch, allocator) =>
      val writing = batch.row(2)
      assert(writing.begin() != null)
      batch.giveUp()
      assert(batch.releases == 0, "released under a decode thread's write")
      assert(allocator.getAllocatedMemory == 4 * 16, "still held by the open row")
      assert(batch.row(3).begin() == null, "a row begun after give-up must write nothing")
      batch.row(3).end()
      assert(batch.releases == 0)
      writing.end()
      assert(batch.releases == 1 && allocator.getAllocatedMemory == 0)
      batch.giveUp() // twice is harmless
      assert(batch.releases == 1)
    }
  }
}
