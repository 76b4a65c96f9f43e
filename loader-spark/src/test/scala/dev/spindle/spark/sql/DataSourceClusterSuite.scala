package dev.spindle.spark.sql

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.preprocess.{PreprocessJob, TestSamples}
import dev.spindle.spark.testkit.{ArrowFiles, BadImages, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * The `spindle` data source on two executor JVMs (local-cluster): every sample once, with the
 * bytes `preprocess` writes, through the DataFrame API and SQL; quarantine files written by the
 * executors.
 */
class DataSourceClusterSuite extends AnyFunSuite {
  test("on local-cluster the scan reads what preprocess writes, and lists what it quarantines") {
    TestFiles.withTempDir("dscluster") { dir =>
      val in = dir.resolve("in")
      TestSamples.generate(in, 4, 6, 80, 60, 7L)
      TestFiles.writeTar(in.resolve("shard-zz-bad.tar"), Seq(
        "bad.jpg" -> BadImages.garbage(200), "bad.cls" -> ascii("1"),
        "ok.jpg" -> TestSamples.jpeg(7L, 99, 80, 60), "ok.cls" -> ascii("2")))
      val spark = session(dir)
      try {
        val q = dir.resolve("quarantine")
        val df = spark.read.format("spindle").option("size", "24").option("batchSize", "4")
          .option("partitionBytes", "1").option("maxFailures", "1")
          .option("quarantine", q.toString).load(in.toString)
        assert(df.rdd.getNumPartitions == 5)
        val rows = df.collect().sortBy(_.getAs[Long]("index"))
        assert(rows.map(_.getAs[Long]("index")).toSeq == (0L until 24L) :+ 25L)

        PreprocessJob.run(spark, in.toString, dir.resolve("arrow").toString, false, Map(
          "spark.spindle.image.size" -> "24", "spark.spindle.maxFailures" -> "1").asJava)
        val arrow = ArrowFiles.readAll(dir.resolve("arrow"))
        assert(rows.map(r => (r.getAs[Long]("index"), r.getAs[String]("key"),
          r.getAs[Int]("label"), r.getAs[Array[Byte]]("image").toSeq)).toSeq ==
          arrow.map(a => (a.index, a.key, a.label, a.image)))

        val listed = spark.read.json(q.toString).collect()
        assert(listed.map(r => (r.getAs[String]("key"), r.getAs[Long]("index"))).toSeq ==
          Seq(("bad", 24L)))
        val sql = spark.sql(s"SELECT count(*), sum(index) FROM spindle.`$in` WITH"
          + " ('size' = '8', 'maxFailures' = '1')").head()
        assert(sql.getLong(0) == 25L && sql.getLong(1) == (0L until 24L).sum + 25L)
      } finally spark.stop()
    }
  }

  private def session(dir: Path): SparkSession = {
    System.setProperty("spark.test.home", Files.createDirectories(dir.resolve("spark-home")).toString)
    SparkSession.builder().master("local-cluster[2,1,1024]").appName("ds-cluster")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.ui.enabled", "false")
      .config("spark.executor.memory", "1g")
      .config("spark.executor.extraClassPath", System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path")))
      .getOrCreate()
  }
}
