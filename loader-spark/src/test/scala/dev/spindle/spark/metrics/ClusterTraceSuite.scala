package dev.spindle.spark.metrics

import java.nio.file.{Files, Path}

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.testkit.TestFiles
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/**
 * The plugin on real executor JVMs (local-cluster[2,1,1024]): both executors load it, and with
 * spark.spindle.trace.file each writes FILE.<executor id> with its pipelines' spans when it stops.
 */
class ClusterTraceSuite extends AnyFunSuite {
  private def complete(p: Path): Boolean =
    Files.exists(p) && scala.util.Try(new ObjectMapper().readTree(p.toFile)).isSuccess

  test("each executor of a cluster writes its own trace file next to FILE") {
    TestFiles.withTempDir("cluster-trace") { dir =>
      val file = dir.resolve("trace.json")
      System.setProperty("spark.test.home",
        Files.createDirectories(dir.resolve("spark-home")).toString)
      val spark = SparkSession.builder().master("local-cluster[2,1,1024]").appName("trace")
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false").config("spark.executor.memory", "1g")
        .config("spark.executor.extraClassPath",
          System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")))
        .config("spark.plugins", SpindlePlugin.CLASS_NAME)
        .config("spark.spindle.trace.file", file.toString)
        .getOrCreate()
      val expected = Seq(dir.resolve("trace.json.0"), dir.resolve("trace.json.1"))
      try {
        // Spark runs tasks on whichever executors have registered; on a loaded machine the second
        // JVM may still be starting when the job ends, and be stopped before its plugin starts.
        // Each plugin creates its file when it starts, so wait for both files first.
        val started = System.nanoTime() + 120_000_000_000L
        while (!expected.forall(Files.exists(_)) && System.nanoTime() < started) Thread.sleep(100)
        assert(expected.forall(Files.exists(_)),
          s"both executors' plugins start within 120 s; in $dir: ${Files.list(dir).toList}")
        val rows = spark.sparkContext.parallelize(0 until 8, 8).map(PluginProbe.task).collect().sum
        assert(rows == 8 * 990)
      } finally spark.stop()
      val deadline = System.nanoTime() + 60_000_000_000L
      while (!expected.forall(complete) && System.nanoTime() < deadline) Thread.sleep(200)
      assert(!Files.exists(file), "no driver file: the driver runs no tasks")
      val spans = expected.map { p =>
        assert(complete(p), s"$p missing or incomplete; in $dir: ${Files.list(dir).toList}")
        new ObjectMapper().readTree(p.toFile).get("traceEvents").asScala
          .count(e => e.get("ph").asText == "X" && e.get("name").asText == "square")
      }
      assert(spans.sum == 8 * 1000, spans) // every item of every task, on one executor or other
    }
  }
}
