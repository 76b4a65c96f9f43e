package dev.spindle.spark.testkit

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.sys.process._

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._
import org.scalatest.Assertions

/**
 * Parquet shards for tests, written by two independent writers: Spark itself (parquet-mr, with
 * small row groups and pages so that row-group and page skipping have something to skip) and
 * DuckDB (its own C++ writer, run by Node from src/test/node).
 */
object ParquetInputs extends Assertions {
  /** One row: an encoded image and a label, each possibly null; `path` fills a struct's `path`. */
  final case class Sample(image: Array[Byte], label: java.lang.Integer, path: String)

  /** Spark's Parquet writer settings that cut `rowsPerGroup` rows per row group, 2 per page. */
  private def smallGroups(rowBytes: Int, rowsPerGroup: Int): Map[String, String] = Map(
    "parquet.block.size" -> math.min(Int.MaxValue, rowBytes.toLong * rowsPerGroup).toString,
    "parquet.block.size.row.check.min" -> "1",
    "parquet.block.size.row.check.max" -> "1",
    "parquet.page.size.row.check.min" -> "1",
    "parquet.page.row.count.limit" -> "2",
    "parquet.compression" -> "snappy")

  /**
   * Writes shard `i` as `dir/shard-00i.parquet` with Spark: `image` BINARY (or, with `struct`,
   * `image: struct<bytes: binary, path: string>` as Hugging Face writes it) and `label` int.
   */
  def spark(spark: SparkSession, dir: Path, shards: Seq[Seq[Sample]], struct: Boolean,
      rowsPerGroup: Int = 4, extra: Seq[StructField] = Seq.empty): Path = {
    Files.createDirectories(dir)
    val imageType = if (struct) StructType(Seq(StructField("bytes", BinaryType),
      StructField("path", StringType))) else BinaryType
    val schema = StructType(Seq(StructField("image", imageType), StructField("label", IntegerType)) ++ extra)
    shards.zipWithIndex.foreach { case (samples, s) =>
      val rows = samples.map { x =>
        val image = if (struct) Row(x.image, x.path) else x.image
        Row.fromSeq(Seq(image, x.label) ++ extra.map(_ => "extra"))
      }
      val rowBytes = samples.map(x => Option(x.image).map(_.length).getOrElse(0)).maxOption.getOrElse(1).max(1)
      write(spark, spark.createDataFrame(rows.asJava, schema), dir.resolve(f"shard-$s%03d.parquet"),
        smallGroups(rowBytes, rowsPerGroup))
    }
    dir
  }

  /** Writes one DataFrame as the single Parquet file `file` (Spark's part file, moved). */
  def write(spark: SparkSession, df: org.apache.spark.sql.DataFrame, file: Path,
      options: Map[String, String] = Map.empty): Path = {
    val tmp = Files.createTempDirectory(file.getParent, "_spark-write")
    try {
      df.coalesce(1).write.mode("overwrite").options(options).parquet(tmp.resolve("out").toString)
      val part = Files.list(tmp.resolve("out")).iterator().asScala
        .filter(_.getFileName.toString.endsWith(".parquet")).toSeq
      assert(part.size == 1, s"Spark wrote $part")
      Files.move(part.head, file)
    } finally TestFiles.deleteRecursively(tmp)
    file
  }

  /** The Node folder of the independent implementations; cancels (fails on CI) without DuckDB. */
  def nodeDir(): Path = {
    val dir = Path.of("src/test/node").toAbsolutePath
    if (!Files.isDirectory(dir.resolve("node_modules/@duckdb/node-api"))) {
      val msg = s"DuckDB for Node not installed: run bin/setup-test-deps (or npm ci --prefix $dir)"
      if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
    }
    dir
  }

  /** Runs SQL statements in DuckDB (in order, one in-memory database). */
  def duckdb(statements: String*): Unit = {
    val dir = nodeDir()
    val out = new StringBuilder
    val code = (Seq("node", dir.resolve("run_duckdb.mjs").toString) ++ statements)
      .!(ProcessLogger(l => out.append(l).append('\n'), l => out.append(l).append('\n')))
    assert(code == 0, s"DuckDB failed: $out")
  }

  /**
   * Writes shard `i` as `dir/shard-00i.parquet` with DuckDB: `image` BLOB (or, with `struct`,
   * `image: {bytes: BLOB, path: VARCHAR}`) and `label` INTEGER, rows in order.
   */
  def duckdbShards(dir: Path, shards: Seq[Seq[Sample]], struct: Boolean): Path = {
    Files.createDirectories(dir)
    val work = Files.createTempDirectory(dir.getParent, "_duckdb-input")
    try {
      val statements = shards.zipWithIndex.map { case (samples, s) =>
        val csv = work.resolve(s"rows-$s.csv")
        val lines = samples.zipWithIndex.map { case (x, j) =>
          val file = if (x.image == null) "" else {
            val f = work.resolve(s"$s-$j.bin")
            Files.write(f, x.image)
            f.toString
          }
          s"$j,$file,${Option(x.label).map(_.toString).getOrElse("")},${x.path}"
        }
        Files.write(csv, ("row,file,label,path" +: lines).asJava, StandardCharsets.UTF_8)
        val image = if (struct) "{'bytes': b.content, 'path': l.path}" else "b.content"
        s"""COPY (SELECT $image AS image, l.label AS label
           |  FROM read_csv('$csv', header = true, columns = {'row': 'INTEGER', 'file': 'VARCHAR',
           |    'label': 'INTEGER', 'path': 'VARCHAR'}) l
           |  LEFT JOIN read_blob('$work/*.bin') b ON b.filename = l.file ORDER BY l.row)
           |TO '${dir.resolve(f"shard-$s%03d.parquet")}' (FORMAT parquet)""".stripMargin
      }
      duckdb(statements: _*)
    } finally TestFiles.deleteRecursively(work)
    dir
  }
}
