package dev.spindle.spark.feed

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.plan.Remainder
import dev.spindle.spark.shard.ParquetColumns
import dev.spindle.spark.testkit.{ArrowFiles, ParquetInputs, Row, SparkFixture, TestFiles}
import dev.spindle.spark.testkit.ParquetInputs.Sample
import org.apache.spark.sql.{Row => SparkRow}
import org.apache.spark.sql.types.{BinaryType, IntegerType, StringType, StructField, StructType}
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.serve.Row

/**
 * Feeding Parquet shards written by Spark and by DuckDB, plain BINARY images and Hugging Face's
 * `{bytes, path}` struct: the same determinism, resume and quarantine properties as tar shards
 * ([[FeedProperties]]), and preprocess on the same inputs.
 */
class FeedParquetSuite extends AnyFunSuite with SparkFixture with FeedProperties {
  import FeedData._

  private def bySpark(dir: Path, struct: Boolean): String =
    ParquetInputs.spark(spark, dir.resolve("in"), rows(Counts), struct,
      extra = Seq(StructField("caption", StringType))).toString // another column, never read

  private def byDuckDb(dir: Path, struct: Boolean): String =
    ParquetInputs.duckdbShards(dir.resolve("in"), rows(Counts), struct).toString

  test("Spark-written {bytes, path}: digests equal the plan's over 1 and 4 partitions and threads") {
    TestFiles.withTempDir("pq-feed-s") { dir => checkDigests(bySpark(dir, struct = true), Seq(1, 4), Seq(1, 4)) }
  }

  test("DuckDB-written BLOB: digests equal the plan's over 1 and 4 partitions and threads") {
    TestFiles.withTempDir("pq-feed-d") { dir => checkDigests(byDuckDb(dir, struct = false), Seq(1, 4), Seq(1, 4)) }
  }

  test("Spark-written BINARY and DuckDB-written {bytes, path}: digests equal the plan's") {
    TestFiles.withTempDir("pq-feed-s2") { dir => checkDigests(bySpark(dir, struct = false), Seq(2), Seq(2)) }
    TestFiles.withTempDir("pq-feed-d2") { dir => checkDigests(byDuckDb(dir, struct = true), Seq(2), Seq(2)) }
  }

  test("Parquet: a run stopped at a random batch and resumed delivers exactly the uninterrupted tail") {
    TestFiles.withTempDir("pq-resume") { dir => checkStopAndResumeAtRandom(bySpark(dir, struct = true), dir) }
  }

  test("Parquet: stopping with 2 ranks and resuming with 3 delivers the rest of the epoch exactly once") {
    TestFiles.withTempDir("pq-n2m") { dir => checkResumeOnAnotherWorldSize(byDuckDb(dir, struct = true), dir) }
  }

  /** Shards of 13 and 7 rows; rows 2 (null image), 5 (null label) and 9 (not an image) of shard 0. */
  private def withBadRows(dir: Path): Path = {
    val good = rows(Seq(13, 7), bad = Set((0, 9)))
    val shard0 = good(0).updated(2, Sample(null, 2, "x")).updated(5, good(0)(5).copy(label = null))
    ParquetInputs.spark(spark, dir.resolve("in"), Seq(shard0, good(1)), struct = true)
  }

  test("null images and labels are quarantined with file and row; every sample once, counts equal") {
    TestFiles.withTempDir("pq-bad") { dir =>
      val in = withBadRows(dir)
      val m = manifest(in)
      val r = feedOn(in.toString, "--world-size", "2", "--batch-size", "4", "--remainder", "PAD",
        "--conf", "spark.spindle.maxFailures=5")
      assert(digests(r, 0) == planDigests(m, spec(0, 0, 2, 4, Remainder.PAD)))
      assert(ranks(r).map(_("batches")) == Seq(3, 3))
      assert(ranks(r).map(_("samples").asInstanceOf[Long]).sum == 20L)
      val q = quarantine(r).map(e => (e("key").toString, e("index").asInstanceOf[Number].longValue, e("reason").toString))
      assert(q.map(e => (e._1, e._2)) ==
        Seq(("shard-000.parquet#2", 2L), ("shard-000.parquet#5", 5L), ("shard-000.parquet#9", 9L)))
      assert(q(0)._3 == "the image is null (column 'image.bytes', row 2)")
      assert(q(1)._3 == "the label is null (column 'label', row 5)")
      assert(q(2)._3.startsWith("cannot decode image.bytes of row 9"), q(2)._3)
      assert(quarantine(r).forall(_("shard").toString.endsWith("/in/shard-000.parquet")))
    }
  }

  test("preprocess reads Parquet shards: each good row written once, the bad ones quarantined") {
    TestFiles.withTempDir("pq-pp") { dir =>
      val in = withBadRows(dir)
      val out = dir.resolve("out")
      val report = PreprocessJob.run(spark, in.toString, out.toString, false, Map(
        "spark.spindle.image.size" -> "8", "spark.spindle.batchSize" -> "4",
        "spark.spindle.maxFailures" -> "5").asJava)
      assert(report.get("images") == 17L && report.get("failures") == 3L)
      val written = ArrowFiles.readAll(out)
      val expected = (0 until 13).filterNot(Set(2, 5, 9)).map(j => (s"shard-000.parquet#$j", j.toLong, j % 10)) ++
        (0 until 7).map(j => (s"shard-001.parquet#$j", 13L + j, j % 10))
      assert(written.map(w => (w.key, w.index, w.label)).sortBy(_._2) == expected)
    }
  }

  test("non-default column names (flags, keys, options) read the rows of the named columns, not image and label") {
    TestFiles.withTempDir("pq-columns") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      val schema = StructType(Seq(StructField("image", StringType), StructField("label", IntegerType),
        StructField("picture", BinaryType), StructField("cls", IntegerType)))
      rows(Seq(13, 7)).zipWithIndex.foreach { case (samples, s) =>
        val decoys = samples.map(x => SparkRow("not the image", x.label + 5, x.image, x.label))
        ParquetInputs.write(spark, spark.createDataFrame(decoys.asJava, schema), in.resolve(f"shard-$s%03d.parquet"))
      }
      val refused = intercept[Exception](feedOn(in.toString, "--world-size", "2"))
      assert(Iterator.iterate[Throwable](refused)(_.getCause).takeWhile(_ != null)
        .exists(e => String.valueOf(e.getMessage).contains("column 'image' has type")), refused)

      val r = feedOn(in.toString, "--image-column", "picture", "--label-column", "cls",
        "--world-size", "2", "--batch-size", "4", "--seed", "3")
      assert(digests(r, 0) == planDigests(manifestOf(in.toString, new ParquetColumns("picture", "cls")),
        spec(3, 0, 2, 4)))
      assert(r.get("images") == 16L && r.get("failures") == 0L)

      val named = Map("spark.spindle.parquet.imageColumn" -> "picture", "spark.spindle.parquet.labelColumn" -> "cls")
      PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false,
        (named + ("spark.spindle.image.size" -> "8")).asJava)
      val reference = ParquetInputs.spark(spark, dir.resolve("ref"), rows(Seq(13, 7)), struct = false)
      PreprocessJob.run(spark, reference.toString, dir.resolve("ref-out").toString, false,
        Map("spark.spindle.image.size" -> "8").asJava)
      val written = ArrowFiles.readAll(dir.resolve("out"))
      assert(written == ArrowFiles.readAll(dir.resolve("ref-out")), "the same pixels, labels and keys")
      assert(written.map(_.label) == ((0 until 13) ++ (0 until 7)).map(_ % 10))

      val df = spark.read.format("spindle").option("size", "8").option("parquet.imageColumn", "picture")
        .option("parquet.labelColumn", "cls").load(in.toString)
      assert(df.collect().toSeq.map(x => Row(x.getAs[Long]("index"), x.getAs[String]("key"),
        x.getAs[Int]("label"), x.getAs[Array[Byte]]("image").toSeq)).sortBy(_.index) == written)
    }
  }
}
