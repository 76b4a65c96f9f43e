package dev.spindle.spark.batch

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, IntVector, VarCharVector}
import org.scalatest.funsuite.AnyFunSuite

/** The reusable batch: rows set in any order, sealed in row order, reused. */
class ImageBatchSuite extends AnyFunSuite {
  private def withBatch(capacity: Int)(f: ImageBatch => Unit): Unit = {
    val alloc = new RootAllocator()
    try {
      val b = new ImageBatch(alloc, 2, 2, 1, capacity)
      try f(b) finally b.close()
    } finally alloc.close() // fails if a buffer leaked
  }

  private def columns(b: ImageBatch): Seq[(Int, String, Long)] = {
    val root = b.root()
    val labels = root.getVector(BatchSchema.LABEL).asInstanceOf[IntVector]
    val keys = root.getVector(BatchSchema.KEY).asInstanceOf[VarCharVector]
    val indices = root.getVector(BatchSchema.INDEX).asInstanceOf[BigIntVector]
    (0 until root.getRowCount).map(r => (labels.get(r), new String(keys.get(r), "UTF-8"), indices.get(r)))
  }

  test("rows set out of order, and set again, keep every row's key, label and index") {
    withBatch(4) { b =>
      for (r <- Seq(0, 2, 3)) b.setRow(r, r, s"k0$r-of-a-longer-key", 10L + r)
      b.setRow(1, BatchSchema.IGNORED_LABEL, "k01", 11L) // an earlier row after later ones
      b.setRow(2, 7, "", 12L)
      b.setLabel(3, BatchSchema.IGNORED_LABEL)
      b.seal(4)
      assert(columns(b) == Seq((0, "k00-of-a-longer-key", 10L), (-100, "k01", 11L), (7, "", 12L),
        (-100, "k03-of-a-longer-key", 13L)))
      b.reset()
      b.setRow(1, 5, "again", 1L)
      b.setRow(0, 4, "once", 0L)
      b.seal(2)
      assert(columns(b) == Seq((4, "once", 0L), (5, "again", 1L)))
    }
  }

  test("a row never set since the last reset is refused when sealing, naming it") {
    withBatch(3) { b =>
      b.setRow(0, 1, "a", 0L)
      b.setRow(2, 1, "c", 2L)
      val e = intercept[IllegalStateException](b.seal(3))
      assert(e.getMessage == "Row 1 of the batch was not set (sealing 3 rows)")
      assert(intercept[IllegalStateException](b.setLabel(1, 0)).getMessage ==
        "Row 1 of the batch was not set")
      b.seal(1)
      b.reset()
      assert(intercept[IllegalStateException](b.seal(1)).getMessage.startsWith("Row 0 "))
    }
  }

  test("a batch without images has no image column nor pixels: label, key, index and the fields") {
    val alloc = new RootAllocator()
    try {
      val fields = FieldSet.parse("text=txt,tokens=tok:list<int32>").extras()
      val b = ImageBatch.withoutImages(alloc, 3, fields)
      try {
        assert(!b.hasImage && b.imageData() == null && b.rowBytes() == 0)
        assert(b.root().getSchema.getFields.asScala.map(_.getName).toSeq == Seq("label", "key", "index", "text", "tokens"))
        for (r <- 0 until 3) {
          b.setRow(r, BatchSchema.IGNORED_LABEL, s"k$r", r.toLong)
          b.setFields(r, java.util.List.of(s"text $r", Array.fill(r)(r)))
        }
        b.movePixels(2, 1) // nothing to move
        b.seal(3)
        assert(columns(b) == (0 until 3).map(r => (-100, s"k$r", r.toLong)))
        val texts = b.root().getVector("text").asInstanceOf[VarCharVector]
        assert((0 until 3).map(r => new String(texts.get(r), "UTF-8")) == Seq("text 0", "text 1", "text 2"))
        assert(b.root().getSchema == BatchSchema.withoutImage(fields))
      } finally b.close()
    } finally alloc.close() // fails if a buffer leaked
  }
}
