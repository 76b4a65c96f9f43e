package dev.spindle.spark.testkit

import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Suite}

/** One embedded Spark (local[2], loopback) per suite. */
trait SparkFixture extends BeforeAndAfterAll { self: Suite =>
  @transient protected var spark: SparkSession = _

  protected def master: String = "local[2]"

  protected def extraConf: Map[String, String] = Map.empty

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    val b = SparkSession.builder()
      .master(master)
      .appName(getClass.getSimpleName)
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "2")
    extraConf.foreach { case (k, v) => b.config(k, v) }
    spark = b.getOrCreate()
  }

  override protected def afterAll(): Unit = {
    try if (spark != null) spark.stop()
    finally super.afterAll()
  }
}
