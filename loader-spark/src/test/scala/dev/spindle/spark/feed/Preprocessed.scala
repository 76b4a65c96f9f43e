package dev.spindle.spark.feed

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import dev.spindle.spark.job.PreprocessJob
import org.apache.spark.sql.SparkSession

/** `preprocess` outputs of test inputs, in either format, for the suites that read them. */
object Preprocessed {
  /**
   * Spark settings that make preprocess's Parquet writer cut row groups of about 5 rows of 8×8×3
   * pixels and pages of 2 rows, so that positions have row groups and pages to skip.
   */
  val smallParquetGroups: Map[String, String] = Map(
    "spark.hadoop.parquet.block.size" -> "1000",
    "spark.hadoop.parquet.block.size.row.check.min" -> "1",
    "spark.hadoop.parquet.block.size.row.check.max" -> "1",
    "spark.hadoop.parquet.page.size.row.check.min" -> "1",
    "spark.hadoop.parquet.page.row.count.limit" -> "2")

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
