package dev.spindle.spark.feed

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import dev.spindle.spark.preprocess.PreprocessJob
import org.apache.spark.sql.SparkSession

/** `preprocess` outputs of test inputs, in either format, for the suites that read them. */
object Preprocessed {
  /**
   * A Spark setting that makes preprocess's Parquet writer cut row groups of 10 KB: parquet-mr
   * checks a row group's size from its 100th row on, so a part file of 250 rows of 8×8×3 pixels
   * has 3 row groups (of 100, 100 and 50 rows) for positions to skip.
   */
  val smallParquetGroups: Map[String, String] = Map("spark.hadoop.parquet.block.size" -> "10000")

  /**
   * Writes `bytes` over a local file that Hadoop's local file system wrote, and removes its
   * `.crc` side file, which would make Hadoop refuse the change before Spindle sees it.
   */
  def overwrite(file: Path, bytes: Array[Byte]): Unit = {
    java.nio.file.Files.write(file, bytes)
    java.nio.file.Files.deleteIfExists(file.resolveSibling("." + file.getFileName + ".crc"))
  }

  /**
   * Preprocesses `in` into `out` (`arrow` or `parquet`) at size 8, record batches of 4 rows, one
   * part file per input shard.
   */
  def write(spark: SparkSession, in: Path, out: Path, format: String,
      extra: Map[String, String] = Map.empty): Path = {
    PreprocessJob.run(spark, in.toString, out.toString, false, (Map(
      "spark.spindle.image.size" -> "8", "spark.spindle.batchSize" -> "4",
      "spark.spindle.partitionBytes" -> "1", "spark.spindle.output.format" -> format) ++ extra).asJava)
    out
  }
}
