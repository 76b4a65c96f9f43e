package dev.spindle.spark.testkit

import java.io.FileInputStream
import java.nio.file.{Files, Path}

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import dev.spindle.spark.batch.{BatchSchema, FixedShapeTensorType, FixedShapeTensorVector}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, IntVector, VarCharVector}
import org.apache.arrow.vector.ipc.ArrowFileReader
import org.apache.arrow.vector.types.pojo.Schema

/** One row of a Spindle Arrow file, copied out of Arrow memory. */
final case class Row(index: Long, key: String, label: Int, image: Seq[Byte])

/** Reads Spindle's Arrow IPC output back with Arrow Java, closing every buffer it opened. */
object ArrowFiles {
  FixedShapeTensorType.register()

  /** The files the output's `_manifest.json` lists, in its order: a reader trusts nothing else. */
  def partFiles(dir: Path): Seq[Path] = {
    val manifest = dev.spindle.spark.metrics.JobReport.read(dir.resolve("_manifest.json"))
    manifest.get("files").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]].asScala
      .map(f => dir.resolve(f.get("path").toString)).toSeq
  }

  def read(file: Path): (Schema, Seq[Row]) = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val in = new FileInputStream(file.toFile)
      val reader = new ArrowFileReader(in.getChannel, allocator)
      try {
        val rows = ArrayBuffer[Row]()
        val root = reader.getVectorSchemaRoot
        val schema = root.getSchema
        for (block <- reader.getRecordBlocks.asScala) {
          reader.loadRecordBatch(block)
          // an output of samples without an image has no image column: its rows' images are empty
          val images = Option(root.getVector(BatchSchema.IMAGE))
            .map(_.asInstanceOf[FixedShapeTensorVector].getUnderlyingVector)
          val data = images.map(_.getDataVector.getDataBuffer).orNull
          val rowBytes = images.map(_.getListSize).getOrElse(0)
          val labels = root.getVector(BatchSchema.LABEL).asInstanceOf[IntVector]
          val keys = root.getVector(BatchSchema.KEY).asInstanceOf[VarCharVector]
          val idx = root.getVector(BatchSchema.INDEX).asInstanceOf[BigIntVector]
          for (r <- 0 until root.getRowCount) {
            val px = new Array[Byte](rowBytes)
            if (data != null) data.getBytes(r.toLong * rowBytes, px)
            rows += Row(idx.get(r), new String(keys.get(r), "UTF-8"), labels.get(r), px.toSeq)
          }
        }
        (schema, rows.toSeq)
      } finally {
        reader.close()
        in.close()
      }
    } finally allocator.close() // fails if the reader leaked a buffer
  }

  def readAll(dir: Path): Seq[Row] = partFiles(dir).flatMap(f => read(f)._2)
}
