package dev.spindle.spark.testkit

import java.nio.file.{Files, Path}

import org.apache.spark.sql.SparkSession

/** A session on local-cluster[2,1,1024]: two executor JVMs with the tests' class path, loopback. */
object LocalCluster {
  /**
   * Starts it; Spark's test home (the executors' work folders) goes under `dir`; `conf`: more
   * settings (e.g. a test's `spark.plugins`).
   */
  def session(dir: Path, appName: String, conf: Map[String, String] = Map.empty): SparkSession = {
    System.setProperty("spark.test.home", Files.createDirectories(dir.resolve("spark-home")).toString)
    conf.foldLeft(SparkSession.builder()) { case (b, (k, v)) => b.config(k, v) }
      .master("local-cluster[2,1,1024]").appName(appName)
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.ui.enabled", "false")
      .config("spark.executor.memory", "1g")
      .config("spark.executor.extraClassPath",
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")))
      .getOrCreate()
  }
}
