package dev.spindle.spark.sql

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import dev.spindle.spark.batch.ExecutorAllocator
import dev.spindle.spark.preprocess.TestSamples
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.spark.sql.DataFrameReader
import org.scalatest.funsuite.AnyFunSuite

/**
 * The `spindle` data source's options: every name of a key, the session's configuration as
 * fallback, errors before any task runs, unknown names refused; and its reader's life cycle.
 */
class DataSourceOptionsSuite extends AnyFunSuite with SparkFixture {
  private def reader: DataFrameReader = spark.read.format("spindle")

  private def height(r: DataFrameReader, in: Path): Int =
    r.load(in.toString).select("height").head().getInt(0)

  private def withInput[T](body: Path => T): T = TestFiles.withTempDir("opts") { dir =>
    TestSamples.generate(dir.resolve("in"), 1, 3, 40, 30, 1L)
    body(dir.resolve("in"))
  }

  test("a key may be given in full, without spark.spindle., or (image keys) by its last part") {
    withInput { in =>
      assert(height(reader.option("size", "16"), in) == 16)
      assert(height(reader.option("image.size", "18"), in) == 18)
      assert(height(reader.option("spark.spindle.image.size", "20"), in) == 20)
      assert(height(reader.option("SIZE", "22"), in) == 22)
      assert(height(reader.option("transforms", "resize(12),center_crop(10)"), in) == 10)
    }
  }

  test("options fall back to the session's configuration, and win over it") {
    withInput { in =>
      spark.conf.set("spark.spindle.image.size", "14")
      try {
        assert(height(reader, in) == 14)
        assert(height(reader.option("size", "12"), in) == 12)
      } finally spark.conf.unset("spark.spindle.image.size")
      assert(height(reader, in) == 224)
    }
  }

  test("an invalid value fails at load, before any task runs, naming option, key and value") {
    withInput { in =>
      def loadError(option: String, value: String): String =
        intercept[IllegalArgumentException](reader.option(option, value).load(in.toString))
          .getMessage
      assert(loadError("size", "-1") == "Invalid value for option 'size'"
        + " (spark.spindle.image.size) of the spindle data source: '-1' (must be an integer > 0)")
      assert(loadError("maxFailures", "lots").startsWith("Invalid value for option"
        + " 'maxFailures' (spark.spindle.maxFailures) of the spindle data source: 'lots'"))
      assert(loadError("transforms", "resize(big)").contains("'transforms'"
        + " (spark.spindle.image.transforms) of the spindle data source: 'resize(big)'"))
      assert(loadError("decode", "maybe") == "Invalid value for option 'decode' of the spindle"
        + " data source: 'maybe' (must be true or false)")
    }
  }

  test("an unknown option is named with the closest one, and refused at load unless allowed") {
    assert(ScanOptions.unknown(Map("sise" -> "16", "decod" -> "false", "size" -> "3").asJava)
      .asScala.sorted == Seq(
        "Unknown option 'decod' of the spindle data source (did you mean 'decode'?)",
        "Unknown option 'sise' of the spindle data source (did you mean 'size',"
          + " spark.spindle.image.size?)"))
    withInput { in =>
      val jobs = spark.sparkContext.statusTracker.getJobIdsForGroup(null).length
      def loadError(r: => Any): String = intercept[IllegalArgumentException](r).getMessage
      // the DataFrame reader, at load(), as an invalid value is
      val typo = loadError(reader.option("sise", "64").load(in.toString))
      assert(typo.startsWith("Unknown option 'sise' of the spindle data source (did you mean"
        + " 'size', spark.spindle.image.size?)"), typo)
      assert(typo.contains("spark.spindle.allowUnknownKeys=true"), typo)
      assert(loadError(reader.option("spark.spindle.batchSise", "8").load(in.toString))
        .startsWith("Unknown option 'spark.spindle.batchSise' of the spindle data source (did you"
          + " mean 'batchSize', spark.spindle.batchSize?)"))
      // SQL, when the query is analysed
      val sql = loadError(spark.sql(s"SELECT height FROM spindle.`$in` WITH ('sizes' = '64')"))
      assert(sql.startsWith("Unknown option 'sizes' of the spindle data source (did you mean"
        + " 'size', spark.spindle.image.size?)"), sql)
      // a catalog table: when a query reads it (Spark stores it without asking the source); it
      // can still be dropped
      spark.sql(s"CREATE TABLE typo USING spindle OPTIONS (path '$in', sise '64')")
      try {
        val table = loadError(spark.sql("SELECT height FROM typo").collect())
        assert(table.startsWith("Unknown option 'sise' of the spindle data source (did you mean"
          + " 'size', spark.spindle.image.size?)"), table)
      } finally spark.sql("DROP TABLE typo")
      assert(!spark.catalog.tableExists("typo"))
      // the session's own unknown spark.spindle.* key, when the scan falls back on it
      spark.conf.set("spark.spindle.image.sise", "64")
      try {
        assert(loadError(reader.load(in.toString)).startsWith("Unknown key"
          + " spark.spindle.image.sise (did you mean spark.spindle.image.size?)"))
      } finally spark.conf.unset("spark.spindle.image.sise")
      assert(spark.sparkContext.statusTracker.getJobIdsForGroup(null).length == jobs,
        "a Spark job ran")

      // option names are case-insensitive, as Spark's are: spark.spindle.batchsize is batchSize
      assert(height(reader.option("spark.spindle.batchsize", "2"), in) == 224)
      // a catalog table's own properties (provider, location, owner, TBLPROPERTIES) are no options
      spark.sql(s"CREATE TABLE sized USING spindle OPTIONS (path '$in', size '16')"
        + " TBLPROPERTIES ('team' = 'vision') COMMENT 'small'")
      try assert(spark.sql("SELECT height FROM sized").head().getInt(0) == 16)
      finally spark.sql("DROP TABLE sized")
      // the escape hatch: logged and ignored
      assert(height(reader.option("sise", "16").option("allowUnknownKeys", "true"), in) == 224)
      spark.conf.set("spark.spindle.allowUnknownKeys", "true")
      try assert(height(reader.option("sise", "16"), in) == 224)
      finally spark.conf.unset("spark.spindle.allowUnknownKeys")
    }
  }

  test("a missing, absent or second input fails at load, naming it") {
    TestFiles.withTempDir("noinput") { dir =>
      val missing = intercept[Exception](reader.load(dir.resolve("typo").toString))
      assert(missing.getMessage == "Input does not exist: " + dir.resolve("typo"))
      assert(intercept[IllegalArgumentException](reader.load()).getMessage
        .startsWith("The spindle data source needs an input URI"))
      assert(intercept[IllegalArgumentException](reader.load(dir.toString, dir.toString))
        .getMessage.startsWith("The spindle data source reads one input URI, got 2"))
    }
  }

  test("the reader owns its batch: reused, valid until next(), close() twice is safe") {
    withInput { in =>
      val settings = ScanOptions.resolve(
        Map("path" -> in.toString, "size" -> "8", "batchSize" -> "2").asJava, Map.empty.asJava,
        new org.apache.hadoop.conf.Configuration())
      val batch = new SpindleBatch(settings, ScanSchema.of(true))
      val partition = batch.planInputPartitions().head
      val r = batch.createReaderFactory().createColumnarReader(partition)
      assert(r.next())
      val first = r.get()
      assert(first.numRows == 2 && first.column(0).getBinary(1).length == 8 * 8 * 3)
      assert(first.column(7).getLong(1) == 1L)
      assert(r.next())
      assert(r.get() eq first, "one batch, refilled")
      assert(first.numRows == 1 && first.column(7).getLong(0) == 2L)
      assert(!r.next())
      r.close()
      r.close()
      val root = ExecutorAllocator.root(Long.MaxValue)
      assert(root.getChildAllocators.isEmpty && root.getAllocatedMemory == 0, root.toVerboseString)
    }
  }
}
