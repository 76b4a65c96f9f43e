package dev.spindle.spark.sql

import java.io.ByteArrayOutputStream
import java.nio.file.{Files, Path}
import java.util.zip.GZIPOutputStream

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.preprocess.TestSamples
import dev.spindle.spark.testkit.{BadImages, CountingFileSystem, ParquetInputs, SparkFixture, TestFiles}
import dev.spindle.spark.testkit.ParquetInputs.Sample
import org.apache.hadoop.conf.Configuration
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types.{BinaryType, IntegerType, StructField, StructType}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The `spindle` data source over every kind of input `preprocess` reads besides plain tar shards
 * (DataSourceSuite): Parquet shards in both layouts, an image folder tree, `.tgz` shards and a
 * brace pattern. Decoded rows equal `preprocess`'s Arrow output of the same input
 * ([[SameAsPreprocess]]); `decode=false` rows hold the input's own bytes and their format. Reading
 * Parquet reads the image and label columns' bytes only ([[CountingFileSystem]]).
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

  test("Parquet shards, plain BINARY and {bytes, path}: rows equal preprocess's; decode=false the stored bytes") {
    TestFiles.withTempDir("ds-pq") { dir =>
      for (struct <- Seq(false, true)) {
        val in = ParquetInputs.spark(spark, dir.resolve(s"in-$struct"), FeedData.rows(Counts), struct).toString
        val df = read(in)
        assert(df.rdd.getNumPartitions == 3)
        val rows = SameAsPreprocess.check(spark, df, in, dir.resolve(s"arrow-$struct"), conf)
        assert(rows.size == 14)
        val keys = Counts.zipWithIndex.flatMap { case (n, s) => (0 until n).map(j => f"shard-$s%03d.parquet#$j") }
        assert(rows.map(_.getAs[String]("key")) == keys)
        val raw = encoded(in)
        assert(raw.map(bytes) == pngs(Counts), s"struct $struct")
        assert(raw.map(_.getAs[String]("format")).distinct == Seq("png"))
        assert(raw.map(_.getAs[Int]("label")) == Counts.flatMap(n => (0 until n).map(_ % 10)))
        assert(raw.map(_.getAs[String]("key")) == keys)
      }
      val duck = ParquetInputs.duckdbShards(dir.resolve("duck"), FeedData.rows(Counts), struct = true).toString
      SameAsPreprocess.check(spark, read(duck), duck, dir.resolve("arrow-duck"), conf)
      assert(encoded(duck).map(bytes) == pngs(Counts))
    }
  }

  test("an image folder tree: rows equal preprocess's; decode=false its files' bytes and extensions") {
    TestFiles.withTempDir("ds-folder") { dir =>
      val in = dir.resolve("in")
      val files = Seq("cat/a.png" -> FeedData.png(1), "cat/b.jpg" -> TestSamples.jpeg(2L, 1, 30, 20),
        "dog/c.png" -> FeedData.png(3), "dog/d.jpeg" -> TestSamples.jpeg(2L, 3, 20, 30),
        "emu/e.png" -> FeedData.png(5))
      files.foreach { case (name, b) =>
        Files.createDirectories(in.resolve(name).getParent)
        Files.write(in.resolve(name), b)
      }
      val rows = SameAsPreprocess.check(spark, read(in.toString), in.toString, dir.resolve("arrow"), conf)
      assert(rows.map(_.getAs[String]("key")) == files.map(_._1))
      assert(rows.map(_.getAs[Int]("label")) == Seq(0, 0, 1, 1, 2))
      val raw = encoded(in.toString)
      assert(raw.map(bytes) == files.map(_._2.toSeq))
      assert(raw.map(_.getAs[String]("format")) == Seq("png", "jpg", "png", "jpeg", "png"))
    }
  }

  test(".tgz shards read as their tars: rows equal preprocess's and the tars'; decode=false the members' bytes") {
    TestFiles.withTempDir("ds-tgz") { dir =>
      val tars = FeedData.tars(dir.resolve("tar"), Counts)
      val tgz = Files.createDirectories(dir.resolve("tgz"))
      Counts.indices.foreach { s =>
        val out = new ByteArrayOutputStream()
        val gz = new GZIPOutputStream(out)
        gz.write(Files.readAllBytes(tars.resolve(f"shard-$s%03d.tar")))
        gz.close()
        Files.write(tgz.resolve(f"shard-$s%03d.tgz"), out.toByteArray)
      }
      val rows = SameAsPreprocess.check(spark, read(tgz.toString), tgz.toString, dir.resolve("arrow"), conf)
      def view(rs: Seq[Row]) = rs.map(r => (r.getAs[Long]("index"), r.getAs[String]("key"), bytes(r)))
      assert(view(rows) == view(read(tars.toString).collect().toSeq.sortBy(_.getAs[Long]("index"))))
      assert(rows.map(_.getAs[String]("shard").replaceAll(".*/", "")).distinct ==
        Seq("shard-000.tgz", "shard-001.tgz", "shard-002.tgz"))
      val raw = encoded(tgz.toString)
      assert(raw.map(bytes) == pngs(Counts))
      assert(raw.map(_.getAs[String]("format")).distinct == Seq("png"))
    }
  }

  /** The bytes of the Parquet files' column chunks: of `image` and `label`, and of the others. */
  private def chunkBytes(dir: Path): (Long, Long) = {
    val chunks = Files.list(dir).iterator().asScala.filter(_.toString.endsWith(".parquet")).toSeq
      .flatMap { f =>
        val r = ParquetFileReader.open(HadoopInputFile.fromPath(
          new org.apache.hadoop.fs.Path(f.toUri), new Configuration()))
        try r.getFooter.getBlocks.asScala.flatMap(_.getColumns.asScala)
          .map(c => (c.getPath.toDotString, c.getTotalSize)).toSeq
        finally r.close()
      }
    val (wanted, other) = chunks.partition(c => c._1 == "image" || c._1 == "label")
    (wanted.map(_._2).sum, other.map(_._2).sum)
  }

  test("Parquet column projection: the DataSource and feed read the image and label chunks, never another column's") {
    TestFiles.withTempDir("ds-pq-proj") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      val schema = StructType(Seq(StructField("image", BinaryType), StructField("label", IntegerType),
        StructField("embedding", BinaryType)))
      val random = new Random(3)
      FeedData.rows(Seq(6, 6)).zipWithIndex.foreach { case (samples, s) =>
        val rows = samples.map(x => Row(x.image, x.label, Array.fill[Byte](64 * 1024)(random.nextInt().toByte)))
        ParquetInputs.write(spark, spark.createDataFrame(rows.asJava, schema), in.resolve(f"shard-$s%03d.parquet"))
      }
      val (wanted, other) = chunkBytes(in)
      assert(other > 12 * 64 * 1024, "the embeddings are stored as they are (incompressible)")
      val uri = CountingFileSystem.uri(in)
      CountingFileSystem.reset()
      assert(read(uri).count() == 12)
      assert(encoded(uri).map(bytes) == pngs(Seq(6, 6)))
      FeedCommand.run(spark, Array("--input", uri, "--size", "8", "--world-size", "2",
        "--batch-size", "2", "--partitions", "2")) // reads each task's planned rows by position
      val got = CountingFileSystem.bytesRead(".parquet")
      assert(got >= 3 * wanted, s"$got bytes read; the image and label chunks hold $wanted")
      assert(got < other / 8, s"$got bytes read; the embedding column alone holds $other")
    }
  }
}
