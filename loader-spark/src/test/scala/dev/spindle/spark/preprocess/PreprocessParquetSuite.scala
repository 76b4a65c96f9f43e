package dev.spindle.spark.preprocess
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.metrics.JobReport
import dev.spindle.spark.testkit.{ArrowFiles, FaultyFileSystem, FaultySparkFixture, Row, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.example.GenSample

/**
 * `preprocess` with `spark.spindle.output.format=parquet`: the same rows as the Arrow output, read
 * back by Spark's own Parquet reader, the shape in the footer's metadata, and the same commit
 * protocol (a retried task is written once; a failed job commits nothing and keeps the old output).
 */
class PreprocessParquetSuite extends AnyFunSuite with FaultySparkFixture {
  override protected def master: String = "local[2,2]" // a failed task is tried once more

  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.batchSize" -> "4",
    "spark.spindle.partitionBytes" -> "1")
  private val parquet = Map("spark.spindle.output.format" -> "parquet")

  private def gen(dir: Path, seed: Long = 5L): Path = {
    GenSample.run(new GenSample.Options(dir.toString, 3, 5, 40, 30, seed), new Configuration())
    dir
  }

  private def run(in: Path, out: String, extra: Map[String, String], overwrite: Boolean = false)
      : JobReport =
    PreprocessJob.run(spark, in.toString, out, overwrite, (conf ++ extra).asJava)

  /** Every row of the files the manifest lists, read by Spark's Parquet reader. */
  private def sparkRows(out: Path): Seq[Row] = {
    val files = ArrowFiles.partFiles(out).map(_.toUri.toString)
    spark.read.parquet(files: _*).collect().toSeq.map { r =>
      Row(r.getAs[Long]("index"), r.getAs[String]("key"), r.getAs[Int]("label"),
        r.getAs[Array[Byte]]("image").toSeq)
    }.sortBy(_.index)
  }

  test("parquet output holds the Arrow output's rows, read back by Spark, shape in the footer") {
    TestFiles.withTempDir("pq") { dir =>
      val in = gen(dir.resolve("in"))
      val arrow = dir.resolve("arrow")
      val out = dir.resolve("parquet")
      run(in, arrow.toString, Map.empty)
      val report = run(in, out.toString, parquet)
      assert(report.get("images") == 15L)
      val manifest = JobReport.read(out.resolve("_manifest.json"))
      assert(manifest.get("format") == "parquet")
      val files = ArrowFiles.partFiles(out)
      assert(files.size == 3 && files.forall(_.getFileName.toString.matches(
        "part-\\d{5}-[0-9a-f]{8}\\.parquet")), files)
      assert(sparkRows(out) == ArrowFiles.readAll(arrow))

      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(
        new org.apache.hadoop.fs.Path(files.head.toUri), new Configuration()))
      try {
        val meta = reader.getFooter.getFileMetaData
        assert(meta.getKeyValueMetaData.get("spindle.image_shape") == "[16,16,3]")
        assert(meta.getSchema.getFields.asScala.map(_.getName) == Seq("image", "label", "key", "index"))
      } finally reader.close()
      val schema = spark.read.parquet(files.head.toUri.toString).schema
      assert(schema.fields.map(f => f.name -> f.dataType.typeName).toSeq ==
        Seq("image" -> "binary", "label" -> "integer", "key" -> "string", "index" -> "long"))
    }
  }

  test("a task whose attempt failed mid-file is retried; every row is committed once") {
    TestFiles.withTempDir("pq-retry") { dir =>
      val in = gen(dir.resolve("in"))
      val out = dir.resolve("out")
      val report = FaultyFileSystem.failFirstFiles(2) {
        run(in, FaultyFileSystem.uri(out), parquet)
      }
      assert(report.get("images") == 15L)
      assert(sparkRows(out).map(_.index) == (0L until 15L))
      assert(!Files.exists(out.resolve("_temporary")))
      assert(Files.list(out).iterator().asScala.map(_.getFileName.toString)
        .count(_.endsWith(".parquet")) == 3)
    }
  }

  test("a failed parquet job commits nothing; an overwrite replaces Arrow output with Parquet") {
    TestFiles.withTempDir("pq-fail") { dir =>
      val in = gen(dir.resolve("in"))
      val out = dir.resolve("out")
      run(in, FaultyFileSystem.uri(out), Map.empty)
      val arrowFiles = ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet
      val e = intercept[Exception] {
        FaultyFileSystem.diskFull(capacity = 1500) {
          run(in, FaultyFileSystem.uri(out), parquet, overwrite = true)
        }
      }
      assert(dev.spindle.spark.cli.Errors.rootMessage(e).contains("No space left on device"))
      assert(ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet == arrowFiles)
      assert(!Files.list(out).iterator().asScala.exists(_.getFileName.toString.endsWith(".parquet")))

      run(in, FaultyFileSystem.uri(out), parquet, overwrite = true)
      val names = Files.list(out).iterator().asScala.map(_.getFileName.toString)
        .filterNot(_.startsWith(".")).toSet
      assert(names == ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet + "_manifest.json")
      assert(names.count(_.endsWith(".parquet")) == 3 && !names.exists(_.endsWith(".arrow")))
      assert(sparkRows(out).map(_.index) == (0L until 15L))
    }
  }
}
