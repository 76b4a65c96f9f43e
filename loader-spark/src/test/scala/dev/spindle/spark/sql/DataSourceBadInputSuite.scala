package dev.spindle.spark.sql

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.preprocess.TestSamples
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.spark.SparkException
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.scalatest.funsuite.AnyFunSuite

/**
 * Bad samples through the `spindle` data source: quarantined, counted in the scan's metrics,
 * listed under the quarantine URI, never silently dropped; past the budget the query fails with
 * the first causes.
 */
class DataSourceBadInputSuite extends AnyFunSuite with SparkFixture {
  private def read(in: Path, options: (String, String)*): DataFrame =
    spark.read.format("spindle").option("size", "16").option("batchSize", "4")
      .options(options.toMap).load(in.toString)

  /** The scan node's metrics after the DataFrame ran. */
  private def scanMetrics(df: DataFrame): Map[String, Long] = {
    val plan = df.queryExecution.executedPlan match {
      case a: AdaptiveSparkPlanExec => a.finalPhysicalPlan
      case p => p
    }
    val scan = plan.collectFirst { case s: BatchScanExec => s }.get
    scan.metrics.map { case (name, m) => name -> m.value }
  }

  test("bad samples are quarantined, counted in the scan's metrics and listed as JSON") {
    TestFiles.withTempDir("dsbad") { dir =>
      val in = TestSamples.mixedShard(dir.resolve("in"))
      val q = dir.resolve("quarantine")
      val df = read(in, "maxFailures" -> "10", "quarantine" -> q.toString)
      val rows = df.collect()
      assert(rows.map(_.getAs[String]("key")).sorted.toSeq == (0 until 6).map(i => s"g$i"))
      val metrics = scanMetrics(df)
      assert(metrics("images") == 6 && metrics("quarantined") == 4, metrics)
      assert(metrics("bytesRead") > 0 && metrics.contains("decodeTime"), metrics)

      val listed = spark.read.json(q.toString).collect()
      val byKey = listed.map(r => r.getAs[String]("key") -> r.getAs[String]("reason")).toMap
      assert(byKey.keySet == Set("garbage", "truncated", "huge", "nolabel"))
      assert(byKey("garbage").startsWith("cannot decode garbage.jpg"), byKey("garbage"))
      assert(byKey("nolabel").contains("no label entry (.cls or .label)"))
      assert(listed.forall(_.getAs[String]("shard").endsWith("mixed.tar")))
      val indices = rows.map(_.getAs[Long]("index")) ++ listed.map(_.getAs[Long]("index"))
      assert(indices.sorted.toSeq == (0L until 10L))

      // the same scan run again (a retried task does the same) replaces its partition's file
      df.collect()
      val files = Files.list(q).iterator().asScala.map(_.getFileName.toString)
        .filterNot(_.startsWith(".")).toSeq
      assert(files.size == 1 && files.head.matches("part-00000-[0-9a-f]{8}\\.json"), files)
      assert(Files.readAllLines(q.resolve(files.head)).size == 4)
    }
  }

  test("past the failure budget the query fails with one error listing the first causes") {
    TestFiles.withTempDir("dsbudget") { dir =>
      val in = TestSamples.mixedShard(dir.resolve("in"))
      val e = intercept[SparkException](read(in, "maxFailures" -> "2").collect())
      val msg = e.getMessage
      assert(msg.contains("Failure budget exceeded reading " + in), msg)
      assert(msg.contains("spark.spindle.maxFailures allows 2 samples"), msg)
      val causes = """mixed\.tar \[(\w+)\]: """.r.findAllMatchIn(msg).map(_.group(1)).toSet
      assert(causes.size >= 3 && causes.subsetOf(Set("garbage", "truncated", "huge", "nolabel")),
        msg)
      // a fraction is judged over at least minSamples samples, as preprocess judges it
      val byFraction = intercept[SparkException](read(in, "maxFailures" -> "1%").collect())
      assert(byFraction.getMessage.contains("4 of 10 samples quarantined"), byFraction.getMessage)
    }
  }
}
