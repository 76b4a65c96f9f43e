package dev.spindle.spark.feed

import java.nio.file.{Files, Path}
import java.util.{Map => JMap}

import scala.jdk.CollectionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.testkit.{CountingFileSystem, TestFiles}
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * `feed` with the executor-local shard cache (`spark.spindle.io.cache`) in local mode, the shards
 * on the counting file system, which records every byte read from storage: two epochs read the data
 * set once, and deliver what a run without the cache delivers. One session per setting: executors
 * read the cache's keys from the configuration their session started with.
 */
class FeedShardCacheSuite extends AnyFunSuite {
  import FeedData._

  private def withSession[T](conf: Map[String, String])(body: SparkSession => T): T = {
    val b = SparkSession.builder()
      .master("local[2]")
      .appName(getClass.getSimpleName)
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.ui.enabled", "false")
      .config("spark.hadoop.fs.counting.impl", classOf[CountingFileSystem].getName)
      .config("spark.hadoop.fs.counting.impl.disable.cache", "true")
    conf.foreach { case (k, v) => b.config(k, v) }
    val spark = b.getOrCreate()
    try body(spark)
    finally spark.stop()
  }

  private def feed(spark: SparkSession, in: String, args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in, "--size", "8", "--world-size", "2",
      "--batch-size", "4", "--seed", "3", "--partitions", "3") ++ args).toArray)

  private def io(r: FeedReport): Map[String, AnyRef] =
    r.get("io").asInstanceOf[JMap[String, AnyRef]].asScala.toMap

  private def tarBytes(dir: Path): Long =
    Files.list(dir).iterator().asScala.filter(_.toString.endsWith(".tar")).map(Files.size(_)).sum

  test("two epochs with the cache read the data set once from storage, with the same digests") {
    TestFiles.withTempDir("feed-cache") { dir =>
      val local = tars(dir.resolve("in"), Seq.fill(8)(30))
      val in = CountingFileSystem.uri(local)
      val dataset = tarBytes(local)
      val state = dir.resolve("state.json")
      val (off, offBytes) = withSession(Map.empty) { spark =>
        feed(spark, in, "--epochs", "2") // counts the manifest, cached beside the shards
        CountingFileSystem.reset()
        val r = feed(spark, in, "--epochs", "2")
        (r, CountingFileSystem.bytesRead(".tar"))
      }
      assert(io(off)("cache_misses") == 0L && io(off)("cache_hits") == 0L)
      val cacheConf = Map("spark.spindle.io.cache" -> "true",
        "spark.spindle.io.cache.dir" -> dir.resolve("cache").toString)
      val (cold, coldBytes, warm, warmBytes) = withSession(cacheConf) { spark =>
        CountingFileSystem.reset()
        val c = feed(spark, in, "--epochs", "1", "--save-state", state.toString)
        val coldBytes = CountingFileSystem.bytesRead(".tar")
        CountingFileSystem.reset()
        val w = feed(spark, in, "--epochs", "2", "--resume", state.toString)
        (c, coldBytes, w, CountingFileSystem.bytesRead(".tar"))
      }
      info(f"data set $dataset bytes; without the cache 2 epochs read $offBytes " +
        f"(${offBytes.toDouble / dataset}%.3fx); with it epoch 0 read $coldBytes " +
        f"(${coldBytes.toDouble / dataset}%.3fx), epoch 1 $warmBytes (${warmBytes.toDouble / dataset}%.3fx)")
      assert(coldBytes == dataset, "the cold epoch fetches every shard once, whole")
      assert(warmBytes <= 0.05 * dataset, s"the warm epoch read $warmBytes of $dataset bytes")
      assert(digests(cold, 0) == digests(off, 0) && digests(warm, 1) == digests(off, 1))
      assert(digests(off, 0) == planDigests(manifest(local), spec(3, 0, 2, 4)))
      assert(cold.get("failures") == 0L && warm.get("failures") == 0L)
      assert(io(cold)("cache_misses") == 8L && io(cold)("cache_bytes_fetched") == dataset)
      assert(io(warm)("cache_misses") == 0L && io(warm)("cache_bytes_fetched") == 0L)
      assert(io(warm)("cache_hits").asInstanceOf[Long] > 0L)
      assert(io(warm)("cache_bytes_served").asInstanceOf[Long] > 0L)
      assert(io(warm)("cache_corrupt") == 0L && io(warm)("cache_unusable") == null)
      // with the member index (on by default): every open reads its planned ranges from the local
      // copy; the report's storage reads are the whole-shard fetches of the cold epoch alone
      for (r <- Seq(cold, warm)) assert(io(r)("shard_opens_indexed") == io(r)("shard_opens"), io(r))
      assert(io(cold)("bytes_read").asInstanceOf[Long] >= dataset, io(cold))
      assert(io(warm)("bytes_read").asInstanceOf[Long] <= 0.05 * dataset, io(warm))
    }
  }

  test("a cache folder that cannot be made: the feed reads from storage and the report says why") {
    TestFiles.withTempDir("feed-cache-bad") { dir =>
      val local = tars(dir.resolve("in"), Seq.fill(3)(10))
      val in = CountingFileSystem.uri(local)
      val plain = Files.write(dir.resolve("plain-file"), Array[Byte](1))
      val conf = Map("spark.spindle.io.cache" -> "true",
        "spark.spindle.io.cache.dir" -> plain.resolve("cache").toString)
      val r = withSession(conf)(spark => feed(spark, in, "--epochs", "1"))
      assert(r.get("failures") == 0L && r.get("images") == 24L)
      assert(digests(r, 0) == planDigests(manifest(local), spec(3, 0, 2, 4)))
      assert(io(r)("cache_misses") == 0L && io(r)("cache_hits") == 0L)
      assert(io(r)("cache_unusable").toString.contains(plain.resolve("cache").toString), io(r))
    }
  }
}
