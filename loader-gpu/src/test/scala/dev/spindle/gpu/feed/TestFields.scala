package dev.spindle.gpu.feed

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, Float4Vector, IntVector, VarBinaryVector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.ListVector
import org.apache.arrow.vector.types.pojo.{ArrowType, FieldType}

import scala.jdk.CollectionConverters._

/**
 * Extra fields for feeder tests: an int64 `id`, a float32 `score`, a Utf8 `caption`, a
 * List<Int32> `tokens` and a Binary `blob`, each a function of (batch, row), with empty strings,
 * empty lists and non-ASCII text among them.
 */
object TestFields {
  /** Bytes a row of a variable field may hold in the tests' feeders. */
  val MaxBytes = 64

  val Slots: Seq[SlotField] = Seq(
    SlotField.fixed("id", SlotField.Dtype.INT64),
    SlotField.fixed("score", SlotField.Dtype.FLOAT32),
    new SlotField("caption", SlotField.Dtype.UINT8, SlotField.Kind.STRING, MaxBytes),
    new SlotField("tokens", SlotField.Dtype.INT32, SlotField.Kind.LIST, MaxBytes),
    new SlotField("blob", SlotField.Dtype.UINT8, SlotField.Kind.LIST, MaxBytes))

  def id(batch: Long, row: Int): Long = batch * 1000003L + row * 7L - 5L
  def score(batch: Long, row: Int): Float = batch.toFloat + row / 4f - 0.125f
  def caption(batch: Long, row: Int): String =
    if (row % 3 == 0) "" else s"a photo ${batch}/${row} — é" + "x" * ((batch + row) % 5).toInt
  def tokens(batch: Long, row: Int): Seq[Int] =
    (0 until ((batch + row) % 4).toInt).map(i => (batch * 100 + row * 10 + i).toInt - 50)
  def blob(batch: Long, row: Int): Seq[Byte] = (0 until row % 3).map(i => (batch + row * 40 + i * 90).toByte)

  /** `root` (the core columns of `rows` rows of batch `batch`) with the extra fields appended. */
  def append(alloc: BufferAllocator, root: VectorSchemaRoot, batch: Long,
      caption: (Long, Int) => String = TestFields.caption): VectorSchemaRoot = {
    val rows = root.getRowCount
    val ids = new BigIntVector("id", alloc)
    val scores = new Float4Vector("score", alloc)
    val captions = new VarCharVector("caption", alloc)
    val tokens = ListVector.empty("tokens", alloc)
    tokens.addOrGetVector[IntVector](FieldType.nullable(new ArrowType.Int(32, true)))
    val blobs = new VarBinaryVector("blob", alloc)
    ids.allocateNew(rows); scores.allocateNew(rows); captions.allocateNew(rows)
    blobs.allocateNew(rows)
    val writer = tokens.getWriter
    for (r <- 0 until rows) {
      ids.set(r, id(batch, r))
      scores.set(r, score(batch, r))
      captions.setSafe(r, caption(batch, r).getBytes(UTF_8))
      writer.setPosition(r)
      writer.startList()
      TestFields.tokens(batch, r).foreach(writer.writeInt)
      writer.endList()
      blobs.setSafe(r, blob(batch, r).toArray)
    }
    val extra = Seq[FieldVector](ids, scores, captions, tokens, blobs)
    extra.foreach(_.setValueCount(rows))
    val vectors = root.getFieldVectors.asScala.toSeq ++ extra
    val out = new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava)
    out.setRowCount(rows)
    out
  }
}
