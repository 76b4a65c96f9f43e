package dev.spindle.spark.feed

import java.nio.file.{Files, Path}
import java.util.UUID
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import dev.spindle.spark.batch.{BatchSchema, FixedShapeTensorVector}
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.shard.HadoopConf
import dev.spindle.spark.plan.EpochPlan
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.arrow.vector.{IntVector, VarCharVector}
import org.apache.spark.api.java.JavaSparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskStart}
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.manifest.ManifestCache
import dev.spindle.spark.serve.BatchConsumer
import dev.spindle.spark.serve.FeedInputs
import dev.spindle.spark.serve.FeedSettings
import dev.spindle.spark.serve.FeedTask

/**
 * Feeding a `preprocess` output, Arrow IPC and Parquet: the same determinism, resume and
 * exactly-once properties as any input ([[FeedProperties]]), nothing decoded, and image settings
 * that disagree with what is stored refused before any task.
 */
class FeedPreprocessedSuite extends AnyFunSuite with SparkFixture with FeedProperties {
  import FeedData._

  // small Parquet row groups and pages, so that reading positions has groups and pages to skip
  override protected def extraConf: Map[String, String] = Preprocessed.smallParquetGroups

  private def prep(dir: Path, format: String): String =
    Preprocessed.write(spark, tars(dir.resolve("in"), Counts), dir.resolve("prep"), format).toString

  /**
   * Every row of every batch that epoch 0's feed tasks (world 2, batch 4, seed 3) deliver, read off
   * the batches themselves: (rank, batch, index, key, label, pixels), in delivery order.
   */
  private def delivered(input: String, conf: Map[String, String]): Seq[(Int, Int, Long, String, Int, Seq[Byte])] = {
    val m = manifestOf(input)
    val plan = EpochPlan.create(m, spec(3, 0, 2, 4))
    val inputs = JavaSparkContext.fromSparkContext(spark.sparkContext).broadcast(FeedInputs.of(plan, m))
    try {
      val task = new FeedTask("pixels", inputs, FeedSettings.from(conf.asJava, m),
        new HadoopConf(spark.sparkContext.hadoopConfiguration))
      val rows = ArrayBuffer[(Int, Int, Long, String, Int, Seq[Byte])]()
      val consumer: BatchConsumer = b => {
        val images = b.root.getVector(BatchSchema.IMAGE).asInstanceOf[FixedShapeTensorVector].getUnderlyingVector
        val rowBytes = images.getListSize
        val keys = b.root.getVector(BatchSchema.KEY).asInstanceOf[VarCharVector]
        val labels = b.root.getVector(BatchSchema.LABEL).asInstanceOf[IntVector]
        for (r <- 0 until b.rows) {
          val px = new Array[Byte](rowBytes)
          images.getDataVector.getDataBuffer.getBytes(r.toLong * rowBytes, px)
          rows += ((b.key.rank, b.key.batch, b.index(r), new String(keys.get(r), "UTF-8"), labels.get(r), px.toSeq))
        }
      }
      for (slices <- FeedPartitions.split(plan, plan.batchesPerRank(), 1).asScala)
        task.run(slices, consumer, UUID.randomUUID().toString)
      rows.toSeq
    } finally inputs.destroy()
  }

  test("feeding the output delivers byte for byte what feeding the original shards delivers") {
    TestFiles.withTempDir("prep-px") { dir =>
      for (format <- Seq("arrow", "parquet")) {
        val in = prep(dir.resolve(format), format)
        val original = delivered(dir.resolve(format).resolve("in").toString, Map("spark.spindle.image.size" -> "8"))
        assert(original.size == 64 && original.map(_._6).distinct.size == 64, "64 distinct images")
        assert(delivered(in, Map.empty) == original, format)
        assert(delivered(in, Map("spark.spindle.image.size" -> "8")) == original, format)
      }
    }
  }

  test("Arrow output: digests equal the plan's over 1 and 4 partitions and threads; nothing decoded") {
    TestFiles.withTempDir("prep-a") { dir =>
      val in = prep(dir, "arrow")
      checkDigests(in, Seq(1, 4), Seq(1, 4))
      val r = feedOn(in, "--world-size", "3", "--batch-size", "4")
      assert(r.get("images_decoded") == 0L && r.get("samples_read") == 60L)
      val manifest = r.get("manifest").asInstanceOf[java.util.Map[String, AnyRef]]
      assert(manifest.get("status") == ManifestCache.PREPROCESSED)
      assert(manifest.get("location").toString.endsWith("/prep/_manifest.json"))
      assert(r.get("image_shape").toString == "[8, 8, 3]")
      assert(r.get("transforms") == "resize(8),center_crop(8)")
      assert(!Files.exists(dir.resolve("prep/_spindle_manifest.json")), "a preprocess output is not cached")
      val tars = feedOn(dir.resolve("in").toString, "--world-size", "3", "--batch-size", "4")
      assert(tars.get("images_decoded") == 60L, "the same run on the tars decodes every image")
    }
  }

  test("Parquet output: digests equal the plan's over 2 partitions and threads; nothing decoded") {
    TestFiles.withTempDir("prep-p") { dir =>
      val in = prep(dir, "parquet")
      checkDigests(in, Seq(2), Seq(2))
      assert(feedOn(in, "--world-size", "3", "--batch-size", "4").get("images_decoded") == 0L)
    }
  }

  test("Arrow and Parquet outputs: a run stopped at a random batch and resumed delivers the tail") {
    TestFiles.withTempDir("prep-r") { dir =>
      checkStopAndResumeAtRandom(prep(dir.resolve("a"), "arrow"), dir)
      checkStopAndResumeAtRandom(prep(dir.resolve("p"), "parquet"), dir)
    }
  }

  test("Arrow and Parquet outputs: stopping with 2 ranks and resuming with 3 delivers each sample once") {
    TestFiles.withTempDir("prep-n2m") { dir =>
      checkResumeOnAnotherWorldSize(prep(dir.resolve("a"), "arrow"), dir.resolve("a"))
      checkResumeOnAnotherWorldSize(prep(dir.resolve("p"), "parquet"), dir.resolve("p"))
    }
  }

  test("image settings that disagree with the stored images are refused before any task, naming both") {
    TestFiles.withTempDir("prep-size") { dir =>
      val in = prep(dir, "arrow")
      val tasks = new AtomicInteger()
      val listener = new SparkListener {
        override def onTaskStart(e: SparkListenerTaskStart): Unit = tasks.incrementAndGet()
      }
      spark.sparkContext.addSparkListener(listener)
      try {
        def feed(args: String*) = FeedCommand.run(spark, (Seq("--input", in, "--world-size", "2") ++ args).toArray)
        val size = intercept[IllegalArgumentException](feed("--size", "16"))
        assert(size.getMessage.contains("is a preprocess output of [8, 8, 3] images made by 'resize(8),center_crop(8)'"), size.getMessage)
        assert(size.getMessage.contains("spark.spindle.image.size=16"), size.getMessage)
        assert(size.getMessage.contains("ask for [16, 16, 3] images made by 'resize(16),center_crop(16)'"), size.getMessage)
        val chain = intercept[IllegalArgumentException](feed(
          "--conf", "spark.spindle.image.transforms=resize(10),center_crop(8)"))
        assert(chain.getMessage.contains("spark.spindle.image.transforms=resize(10),center_crop(8)"), chain.getMessage)
        // events arrive in order: once the probe job's one task is seen, any earlier one was too
        spark.sparkContext.parallelize(Seq(1), 1).count()
        val deadline = System.nanoTime() + 10L * 1000 * 1000 * 1000
        while (tasks.get == 0 && System.nanoTime() < deadline) Thread.sleep(20)
        assert(tasks.get == 1, "no Spark task ran but the probe's")
      } finally spark.sparkContext.removeSparkListener(listener)
      // the stored chain, spelled otherwise, is what is stored
      val same = feedOn(in, "--world-size", "2", "--batch-size", "4",
        "--conf", "spark.spindle.image.transforms=resize(SIZE), center_crop(SIZE)")
      assert(same.get("images") == 64L)
      assert(FeedCommand.run(spark, Array("--input", in, "--world-size", "2", "--batch-size", "4"))
        .get("image_shape").toString == "[8, 8, 3]", "without image settings: the stored shape")
    }
  }
}
