package dev.spindle.gpu.feed

import java.nio.charset.StandardCharsets

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.memory.util.hash.ArrowBufHasher
import org.apache.arrow.vector.{BigIntVector, ExtensionTypeVector, FieldVector, IntVector, UInt1Vector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.FixedSizeListVector
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.scalatest.Assertions._

import scala.jdk.CollectionConverters._

/** The canonical `arrow.fixed_shape_tensor` extension type, as the Spark side writes it. */
final class TensorType(val listSize: Int, val metadata: String) extends ArrowType.ExtensionType {
  override def storageType(): ArrowType = new ArrowType.FixedSizeList(listSize)
  override def extensionName(): String = "arrow.fixed_shape_tensor"
  override def extensionEquals(other: ArrowType.ExtensionType): Boolean = other match {
    case t: TensorType => t.listSize == listSize && t.metadata == metadata
    case _ => false
  }
  override def serialize(): String = metadata
  override def deserialize(storage: ArrowType, data: String): ArrowType =
    new TensorType(storage.asInstanceOf[ArrowType.FixedSizeList].getListSize, data)
  override def getNewVector(name: String, ft: FieldType, alloc: BufferAllocator): FieldVector = {
    val storage = FixedSizeListVector.empty(name, listSize, alloc)
    storage.addOrGetVector(FieldType.notNullable(new ArrowType.Int(8, false)))
    new TensorVector(name, alloc, storage, this)
  }
}

final class TensorVector(name: String, alloc: BufferAllocator, storage: FixedSizeListVector,
    tpe: TensorType) extends ExtensionTypeVector[FixedSizeListVector](name, alloc, storage) {
  override def getObject(index: Int): AnyRef = storage.getObject(index)
  override def hashCode(index: Int): Int = storage.hashCode(index)
  override def hashCode(index: Int, hasher: ArrowBufHasher): Int = storage.hashCode(index, hasher)
  override def getField(): Field =
    new Field(name, FieldType.nullable(tpe), storage.getField.getChildren)
}

/** Deterministic test batches in the feeder's schema, and allocator hygiene. */
object TestBatches {

  /** Pixel `b` of row `row` of batch `batch`: every batch distinguishable. */
  def pixel(batch: Long, row: Int, b: Int): Byte = ((batch * 131 + row * 31 + b * 7) & 0xff).toByte

  def label(batch: Long, row: Int): Long = batch * 1000 + row

  def key(batch: Long, row: Int): String = s"shard-${batch}/sample-é-$row"

  def index(batch: Long, row: Int): Long = batch * 100000 + row

  /**
   * Batch number `batch` with `rows` images of `imageBytes` bytes. `tensor` wraps the image
   * column in the extension type; `longLabels` makes labels int64; `keyOf` names each row.
   */
  def build(alloc: BufferAllocator, batch: Long, rows: Int, imageBytes: Int,
      tensor: Boolean = false, longLabels: Boolean = false,
      keyOf: (Long, Int) => String = key): VectorSchemaRoot = {
    val (imageVector, list) =
      if (tensor) {
        val v = new TensorType(imageBytes, s"""{"shape":[$imageBytes,1,1],"dim_names":["H","W","C"]}""")
          .getNewVector("image", null, alloc)
          .asInstanceOf[TensorVector]
        (v: FieldVector, v.getUnderlyingVector)
      } else {
        val l = FixedSizeListVector.empty("image", imageBytes, alloc)
        l.addOrGetVector(FieldType.notNullable(new ArrowType.Int(8, false)))
        (l: FieldVector, l)
      }
    list.setInitialCapacity(rows)
    list.allocateNew()
    val data = list.getDataVector.asInstanceOf[UInt1Vector]
    val labelVector: FieldVector =
      if (longLabels) new BigIntVector("label", alloc) else new IntVector("label", alloc)
    val keys = new VarCharVector("key", alloc)
    val indices = new BigIntVector("index", alloc)
    labelVector.setInitialCapacity(rows)
    labelVector.allocateNew()
    keys.allocateNew(rows)
    indices.allocateNew(rows)
    for (r <- 0 until rows) {
      list.setNotNull(r)
      for (b <- 0 until imageBytes) data.setSafe(r * imageBytes + b, pixel(batch, r, b))
      labelVector match {
        case v: IntVector => v.setSafe(r, label(batch, r).toInt)
        case v: BigIntVector => v.setSafe(r, label(batch, r))
      }
      keys.setSafe(r, keyOf(batch, r).getBytes(StandardCharsets.UTF_8))
      indices.setSafe(r, index(batch, r))
    }
    data.setValueCount(rows * imageBytes)
    val vectors = Seq[FieldVector](imageVector, labelVector, keys, indices)
    val root = new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava)
    root.setRowCount(rows)
    root
  }

  /** Runs `f` with a root allocator and fails if anything leaked. */
  def withAllocator[T](f: BufferAllocator => T): T = {
    val alloc = new RootAllocator()
    val result = f(alloc)
    assert(alloc.getAllocatedMemory == 0, s"leaked ${alloc.getAllocatedMemory} bytes")
    alloc.close()
    result
  }
}
