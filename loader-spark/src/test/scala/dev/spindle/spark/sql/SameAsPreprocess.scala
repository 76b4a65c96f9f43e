package dev.spindle.spark.sql

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.testkit.ArrowFiles
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.scalatest.Assertions

/**
 * The data source's central promise, checked for any input: its decoded rows are, row for row,
 * what `preprocess` writes to Arrow for the same input and settings (index, key, label, pixels,
 * shape).
 */
object SameAsPreprocess extends Assertions {
  /**
   * Preprocesses `input` into `out` with `conf` (full `spark.spindle.*` keys, `image.size` among
   * them: the settings `df`'s options give) and asserts `df`'s rows equal the Arrow rows;
   * returns `df`'s rows by index.
   */
  def check(spark: SparkSession, df: DataFrame, input: String, out: Path,
      conf: Map[String, String]): Seq[org.apache.spark.sql.Row] = {
    val side = conf("spark.spindle.image.size").toInt
    val rows = df.collect().toSeq.sortBy(_.getAs[Long]("index"))
    PreprocessJob.run(spark, input, out.toString, false, conf.asJava)
    val arrow = ArrowFiles.readAll(out)
    assert(rows.length == arrow.size, s"${rows.length} rows, preprocess wrote ${arrow.size}")
    rows.zip(arrow).foreach { case (r, a) =>
      assert(r.getAs[Long]("index") == a.index)
      assert(r.getAs[String]("key") == a.key)
      assert(r.getAs[Int]("label") == a.label, s"label of ${a.key}")
      assert(r.getAs[Array[Byte]]("image").toSeq == a.image, s"pixels of ${a.key}")
      assert((r.getAs[Int]("height"), r.getAs[Int]("width"), r.getAs[Int]("channels")) ==
        (side, side, 3))
    }
    rows
  }
}
