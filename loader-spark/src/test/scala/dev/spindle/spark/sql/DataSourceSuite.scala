package dev.spindle.spark.sql

import java.nio.file.{Files, Path}

import dev.spindle.spark.batch.ExecutorAllocator
import dev.spindle.spark.preprocess.TestSamples
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/**
 * The `spindle` data source in local mode: what it reads equals what `preprocess` writes for the
 * same input and transforms, through the DataFrame API and SQL, decoded and encoded; the
 * vectors' memory is all returned.
 */
class DataSourceSuite extends AnyFunSuite with SparkFixture {
  private val opts = Map("size" -> "24", "batchSize" -> "5", "partitionBytes" -> "1")

  private def read(in: Path, options: Map[String, String] = opts): DataFrame =
    spark.read.format("spindle").options(options).load(in.toString)

  private def gen(dir: Path, shards: Int = 3, perShard: Int = 7): Path = {
    TestSamples.generate(dir, shards, perShard, 80, 60, 3L)
    dir
  }

  test("columns, counts and bytes equal preprocess's Arrow output; one task per shard") {
    TestFiles.withTempDir("ds") { dir =>
      val in = gen(dir.resolve("in"))
      val df = read(in)
      assert(df.schema == StructType(Seq(
        StructField("image", BinaryType, nullable = false),
        StructField("height", IntegerType, nullable = false),
        StructField("width", IntegerType, nullable = false),
        StructField("channels", IntegerType, nullable = false),
        StructField("label", IntegerType, nullable = false),
        StructField("key", StringType, nullable = false),
        StructField("shard", StringType, nullable = false),
        StructField("index", LongType, nullable = false))))
      assert(df.rdd.getNumPartitions == 3)
      val rows = SameAsPreprocess.check(spark, df, in.toString, dir.resolve("arrow"), Map(
        "spark.spindle.image.size" -> "24", "spark.spindle.batchSize" -> "5"))
      assert(rows.length == 21)
      rows.foreach(r => assert(r.getAs[String]("shard").endsWith(f"shard-${r.getAs[Long]("index") / 7}%05d.tar")))
      assertAllocatorsClosed()
    }
  }

  test("SQL reads spindle.`uri`, with options in WITH, and any column subset") {
    TestFiles.withTempDir("sql") { dir =>
      val in = gen(dir.resolve("in"), shards = 2, perShard = 4)
      val all = spark.sql(s"SELECT index, label, key FROM spindle.`$in`").collect()
      assert(all.map(_.getLong(0)).sorted.toSeq == (0L until 8L))
      val byLabel = spark.sql(
        s"SELECT label, count(*) FROM spindle.`$in` GROUP BY label ORDER BY label").collect()
      assert(byLabel.map(_.getLong(1)).sum == 8)
      val small = spark.sql(
        s"SELECT height, width, length(image) FROM spindle.`$in` WITH ('size' = '16') LIMIT 1")
        .collect().head
      assert((small.getInt(0), small.getInt(1), small.getInt(2)) == (16, 16, 16 * 16 * 3))
      assert(spark.sql(s"SELECT count(*) FROM spindle.`$in`").collect().head.getLong(0) == 8)
      assertAllocatorsClosed()
    }
  }

  test("decode=false returns each image file's bytes and its format") {
    TestFiles.withTempDir("encoded") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      val jpegs = (0 until 5).map(i => TestSamples.jpeg(9L, i, 40, 30))
      TestFiles.writeTar(in.resolve("a.tar"), jpegs.zipWithIndex.flatMap { case (j, i) =>
        Seq(s"s$i.jpg" -> j, s"s$i.cls" -> ascii(i.toString))
      })
      val df = read(in, Map("decode" -> "false"))
      assert(df.schema.fieldNames.toSeq == Seq("image", "format", "label", "key", "shard", "index"))
      val rows = df.collect().sortBy(_.getAs[Long]("index"))
      assert(rows.map(_.getAs[Array[Byte]]("image").toSeq).toSeq == jpegs.map(_.toSeq))
      assert(rows.map(_.getAs[String]("format")).distinct.toSeq == Seq("jpg"))
      assert(rows.map(_.getAs[Int]("label")).toSeq == (0 until 5))
      assert(rows.map(_.getAs[String]("key")).toSeq == (0 until 5).map(i => s"s$i"))
      assertAllocatorsClosed()
    }
  }

  test("a DataFrame of decoded images round-trips through Parquet") {
    TestFiles.withTempDir("parquet") { dir =>
      val in = gen(dir.resolve("in"), shards = 2, perShard = 5)
      val out = dir.resolve("table").toString
      read(in).write.parquet(out)
      val back = spark.read.parquet(out)
      assert(back.schema.fieldNames.toSeq == read(in).schema.fieldNames.toSeq)
      def sorted(df: DataFrame): Seq[Seq[Any]] = df.collect().toSeq
        .map(r => r.toSeq.map { case b: Array[Byte] => b.toSeq; case v => v })
        .sortBy(_(7).asInstanceOf[Long])
      assert(sorted(back) == sorted(read(in)))
    }
  }

  test("a partly read partition closes its reader; the task allocators end with nothing open") {
    TestFiles.withTempDir("limit") { dir =>
      val in = gen(dir.resolve("in"), shards = 2, perShard = 20)
      assert(read(in, opts + ("partitionBytes" -> (1L << 30).toString)).limit(3).collect().length == 3)
      assertAllocatorsClosed()
    }
  }

  /** Every task's child of the executor's root allocator was closed, with nothing outstanding. */
  private def assertAllocatorsClosed(): Unit = {
    val root = ExecutorAllocator.root(Long.MaxValue)
    assert(root.getChildAllocators.isEmpty, root.toVerboseString)
    assert(root.getAllocatedMemory == 0)
  }
}
