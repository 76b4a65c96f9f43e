package dev.spindle.spark.train

import java.nio.file.Files
import java.util.{Map => JMap}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.testkit.{CountingFileSystem, SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `train` with the executor-local shard cache on (set when the session starts, as executors read
 * it): the report's `io` object counts what the cache did over the run's epochs.
 */
class TrainShardCacheSuite extends AnyFunSuite with SparkFixture {
  import dev.spindle.spark.feed.FeedData._
  import TrainRuns._

  private val cacheDir = TestFiles.tempDir("train-cache")

  override protected def master: String = "local[4]"

  override protected def extraConf: Map[String, String] = Map(
    "spark.spindle.io.cache" -> "true",
    "spark.spindle.io.cache.dir" -> cacheDir.toString,
    "spark.hadoop.fs.counting.impl" -> classOf[CountingFileSystem].getName,
    "spark.hadoop.fs.counting.impl.disable.cache" -> "true")

  override protected def afterAll(): Unit =
    try super.afterAll() finally TestFiles.deleteRecursively(cacheDir)

  test("two epochs of train: each shard fetched into the cache once, the second epoch served from it") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-cache-in") { dir =>
      val local = tars(dir.resolve("in"), Seq(13, 7, 25))
      val out = Files.createDirectories(dir.resolve("out"))
      val r = TrainCommand.run(spark, (Seq("--input", CountingFileSystem.uri(local), "--size", "8",
        "--world-size", "2", "--batch-size", "4", "--seed", "5", "--remainder", "PAD", "--python",
        Python, "--epochs", "2", "--", Script.toString, out.toString)).toArray)
      val real = realRows(out, 2)
      assert(real.sorted == (for (e <- 0 until 2; i <- 0L until 45) yield (e, i)).sorted)
      val io = r.get("io").asInstanceOf[JMap[String, AnyRef]].asScala
      val dataset = Files.list(local).iterator().asScala.filter(_.toString.endsWith(".tar"))
        .map(Files.size(_)).sum
      assert(io("cache_misses") == 3L && io("cache_bytes_fetched") == dataset, io)
      assert(io("cache_hits").asInstanceOf[Long] >= 3L, io)
      assert(io("cache_corrupt") == 0L && io("cache_unusable") == null, io)
    }
  }
}
