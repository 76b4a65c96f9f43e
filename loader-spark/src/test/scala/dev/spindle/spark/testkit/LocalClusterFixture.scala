package dev.spindle.spark.testkit

import java.nio.file.Path

import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Suite}

/**
 * One [[LocalCluster]] session for a whole suite, with a scratch folder `dir` (the executors'
 * Spark home under it) that is removed after the session stops.
 */
trait LocalClusterFixture extends BeforeAndAfterAll { self: Suite =>
  protected var spark: SparkSession = _
  protected var dir: Path = _

  /** The application's name, also the scratch folder's prefix. */
  protected def appName: String

  /** More settings of the session (e.g. `spark.plugins`); none by default. */
  protected def sessionConf: Map[String, String] = Map.empty

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    dir = TestFiles.tempDir(appName)
    spark = LocalCluster.session(dir, appName, sessionConf)
  }

  override protected def afterAll(): Unit = {
    try if (spark != null) spark.stop()
    finally {
      TestFiles.deleteRecursively(dir)
      super.afterAll()
    }
  }
}
