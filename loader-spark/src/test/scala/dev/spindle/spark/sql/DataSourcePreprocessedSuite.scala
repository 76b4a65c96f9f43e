package dev.spindle.spark.sql

import java.nio.file.{Files, Path}
import java.util.HexFormat

import scala.jdk.CollectionConverters._

import dev.spindle.spark.batch.ExecutorAllocator
import dev.spindle.spark.feed.{FeedData, Preprocessed}
import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.testkit.{ArrowFiles, ParquetInputs, Row, SparkFixture, TestFiles}
import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite

/**
 * The `spindle` data source on a `preprocess` output: the stored rows as they are (what
 * ArrowFiles reads from the files), with the manifest's shape; `decode=false` gives the same
 * pixels as `raw`; image options that disagree with what is stored fail at load(). And
 * `preprocess` reading its own output converts it (Arrow to Parquet) row for row.
 */
class DataSourcePreprocessedSuite extends AnyFunSuite with SparkFixture {
  private def prep(dir: Path, format: String): Path =
    Preprocessed.write(spark, FeedData.tars(dir.resolve("in"), Seq(5, 3, 6)), dir.resolve(format), format)

  private def read(in: Path, options: Map[String, String] = Map("partitionBytes" -> "1")): DataFrame =
    spark.read.format("spindle").options(options).load(in.toString)

  private def rows(df: DataFrame): Seq[Row] = df.collect().toSeq
    .map(r => Row(r.getAs[Long]("index"), r.getAs[String]("key"), r.getAs[Int]("label"),
      r.getAs[Array[Byte]]("image").toSeq))
    .sortBy(_.index)

  test("an Arrow output reads as its files' rows, shape from its manifest, one partition per file") {
    TestFiles.withTempDir("dsp-a") { dir =>
      val out = prep(dir, "arrow")
      val df = read(out)
      assert(df.rdd.getNumPartitions == 3)
      assert(rows(df) == ArrowFiles.readAll(out).sortBy(_.index))
      val first = df.collect().minBy(_.getAs[Long]("index"))
      assert((first.getAs[Int]("height"), first.getAs[Int]("width"), first.getAs[Int]("channels")) == (8, 8, 3))
      assert(first.getAs[String]("shard") == "file:" + ArrowFiles.partFiles(out).head)
      assert(first.getAs[String]("key") == "s0_0000")
      assert(rows(read(out, Map("size" -> "8"))) == rows(df), "the stored size may be named")
      assertAllocatorsClosed()
    }
  }

  test("a Parquet output reads as the Arrow output of the same input; decode=false gives raw pixels") {
    TestFiles.withTempDir("dsp-p") { dir =>
      val out = prep(dir, "parquet")
      val arrow = ArrowFiles.readAll(prep(dir.resolve("again"), "arrow")).sortBy(_.index)
      assert(rows(read(out)) == arrow)
      val raw = read(out, Map("decode" -> "false"))
      assert(raw.schema.fieldNames.toSeq == Seq("image", "format", "label", "key", "shard", "index"))
      assert(rows(raw) == arrow)
      assert(raw.collect().map(_.getAs[String]("format")).distinct.toSeq == Seq("raw"))
      assert(spark.sql(s"SELECT count(*), min(length(image)) FROM spindle.`$out`").collect().head.toSeq ==
        Seq(14L, 192))
      assertAllocatorsClosed()
    }
  }

  test("DuckDB (as a Python user without pyarrow) reads the Parquet output's files as stored") {
    TestFiles.withTempDir("dsp-duck") { dir =>
      val out = prep(dir, "parquet")
      val files = ArrowFiles.partFiles(out).map(f => s"'$f'").mkString("[", ", ", "]")
      val csv = dir.resolve("rows.csv")
      ParquetInputs.duckdb(s"COPY (SELECT index, key, label, hex(image) AS image FROM" +
        s" read_parquet($files) ORDER BY index) TO '$csv' (HEADER false)")
      val got = Files.readAllLines(csv).asScala.toSeq.map(_.split(","))
        .map(c => Row(c(0).toLong, c(1), c(2).toInt, HexFormat.of().parseHex(c(3)).toSeq))
      assert(got == rows(read(out)))
      assert(got.size == 14)
    }
  }

  test("image options that disagree with the stored images fail at load(), naming both") {
    TestFiles.withTempDir("dsp-size") { dir =>
      val out = prep(dir, "arrow")
      val e = intercept[IllegalArgumentException](read(out, Map("size" -> "16")))
      assert(e.getMessage.contains(s"Input $out is a preprocess output of [8, 8, 3] images made by" +
        " 'resize(8),center_crop(8)'"), e.getMessage)
      assert(e.getMessage.contains("spark.spindle.image.size=16"), e.getMessage)
    }
  }

  test("preprocess of a preprocess output copies its rows (Arrow to Parquet), decoding nothing") {
    TestFiles.withTempDir("dsp-conv") { dir =>
      val arrow = prep(dir, "arrow")
      val out = dir.resolve("converted")
      val report = PreprocessJob.run(spark, arrow.toString, out.toString, false,
        Map("spark.spindle.output.format" -> "parquet").asJava)
      assert(report.get("images") == 14L && report.get("image_shape").toString == "[8, 8, 3]")
      assert(report.get("transforms") == "resize(8),center_crop(8)")
      assert(rows(read(out)) == ArrowFiles.readAll(arrow).sortBy(_.index))
      val refused = intercept[IllegalArgumentException](PreprocessJob.run(spark, arrow.toString,
        dir.resolve("other").toString, false, Map("spark.spindle.image.size" -> "4").asJava))
      assert(refused.getMessage.contains("is a preprocess output of [8, 8, 3] images"), refused.getMessage)
    }
  }

  private def assertAllocatorsClosed(): Unit = {
    val root = ExecutorAllocator.root(Long.MaxValue)
    assert(root.getChildAllocators.isEmpty, root.toVerboseString)
    assert(root.getAllocatedMemory == 0)
  }
}
