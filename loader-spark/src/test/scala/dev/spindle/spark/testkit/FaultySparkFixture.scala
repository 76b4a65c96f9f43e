package dev.spindle.spark.testkit

import org.scalatest.Suite

/** [[SparkFixture]]'s embedded Spark with [[FaultyFileSystem]]'s `faulty:` scheme registered. */
trait FaultySparkFixture extends SparkFixture { self: Suite =>
  override protected def beforeAll(): Unit = {
    super.beforeAll()
    FaultyFileSystem.register(spark.sparkContext.hadoopConfiguration)
  }
}
