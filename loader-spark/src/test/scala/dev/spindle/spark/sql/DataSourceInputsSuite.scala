package dev.spindle.spark.sql

import java.io.ByteArrayOutputStream
import java.nio.file.{Files, Path}
import java.util.zip.GZIPOutputStream

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.job.TestSamples
import dev.spindle.spark.testkit.{BadImages, CountingFileSystem, ParquetInputs, SparkFixture, TestFiles}
import dev.spindle.spark.testkit.ParquetInputs.Sample
import org.apache.hadoop.conf.Configuration
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types.{BinaryType, IntegerType, StructField, StructType}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The `spindle` data source over inputs other than plain tar shards (DataSourceSuite): a brace
 * pattern, Parquet shards. Decoded rows equal `preprocess`'s Arrow output of the same input
 * ([[SameAsPreprocess]]); `decode=false` rows hold the input's own bytes and their format.
 */
class DataSourceInputsSuite extends AnyFunSuite with SparkFixture {
  private val Counts = Seq(5, 3, 6)
  private val opts = Map("size" -> "8", "batchSize" -> "4", "partitionBytes" -> "1")
  private val conf = Map("spark.spindle.image.size" -> "8", "spark.spindle.batchSize" -> "4")

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    CountingFileSystem.register(spark.sparkContext.hadoopConfiguration)
  }

  private def read(in: String, options: Map[String, String] = opts): DataFrame =
    spark.read.format("spindle").options(options).load(in)

  private def encoded(in: String, options: Map[String, String] = Map.empty): Seq[Row] =
    read(in, opts ++ options + ("decode" -> "false")).collect().toSeq.sortBy(_.getAs[Long]("index"))

  private def bytes(r: Row): Seq[Byte] = r.getAs[Array[Byte]]("image").toSeq

  /** The PNG that FeedData writes for sample `j` of shard `s`. */
  private def png(s: Int, j: Int): Seq[Byte] = FeedData.png(s * 1000 + j).toSeq

  private def pngs(counts: Seq[Int]): Seq[Seq[Byte]] =
    counts.zipWithIndex.flatMap { case (n, s) => (0 until n).map(png(s, _)) }

  test("a brace pattern reads the shards it names, as preprocess does, listing no folder") {
    TestFiles.withTempDir("ds-brace") { dir =>
      FeedData.tars(dir.resolve("in"), Counts) // shard-002.tar is there, but not named
      val pattern = CountingFileSystem.uri(dir.resolve("in")) + "/shard-{000..001}.tar"
      CountingFileSystem.reset()
      assert(read(pattern).count() == 8)
      assert(CountingFileSystem.listingCount == 0, "a brace pattern is never listed")
      val rows = SameAsPreprocess.check(spark, read(pattern), pattern, dir.resolve("arrow"), conf)
      assert(rows.map(_.getAs[String]("key")) ==
        (0 until 5).map(j => f"s0_$j%04d") ++ (0 until 3).map(j => f"s1_$j%04d"))
      assert(rows.map(_.getAs[String]("shard").replaceAll(".*/", "")).distinct ==
        Seq("shard-000.tar", "shard-001.tar"))
      assert(encoded(pattern).map(bytes) == pngs(Counts.take(2)))
      assert(spark.sql(s"SELECT count(*) FROM spindle.`$pattern`").collect().head.getLong(0) == 8)
      assert(CountingFileSystem.listingCount == 0)

      val malformed = intercept[IllegalArgumentException](read(s"${dir.resolve("in")}/shard-{000..}.tar"))
      assert(malformed.getMessage.contains("shard-{000..}.tar"), malformed.getMessage)
      val missing = intercept[Exception](read(s"${dir.resolve("in")}/shard-{000..003}.tar").count())
      assert(Iterator.iterate[Throwable](missing)(_.getCause).takeWhile(_ != null)
        .exists(e => String.valueOf(e.getMessage).contains("shard-003.tar")), missing)
    }
  }

  test("decode=false on Parquet rows: format is what the bytes are (jpeg, png), \"\" for others") {
    TestFiles.withTempDir("ds-pq-format") { dir =>
      val jpeg = TestSamples.jpeg(4L, 0, 24, 16)
      val png = FeedData.png(1)
      val other = BadImages.garbage(200)
      // a {bytes, path} row's path may name another format than its bytes: the bytes win
      val rows = Seq(Sample(jpeg, 0, "a.png"), Sample(png, 1, null), Sample(other, 2, "c.jpg"))
      for (struct <- Seq(false, true)) {
        val in = ParquetInputs.spark(spark, dir.resolve(s"in-$struct"), Seq(rows), struct)
        val got = encoded(in.toString)
        assert(got.map(_.getAs[String]("format")) == Seq("jpeg", "png", ""), s"struct $struct")
        assert(got.map(bytes) == rows.map(_.image.toSeq), s"struct $struct")
        assert(got.map(_.getAs[Int]("label")) == Seq(0, 1, 2))
      }
    }
  }

}
