package dev.spindle.spark.feed

import java.nio.file.Path
import java.util.UUID
import java.util.concurrent.TimeUnit

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import dev.spindle.spark.shard.HadoopConf
import dev.spindle.spark.plan.EpochPlan
import dev.spindle.spark.progress.ProgressCounters
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.spark.api.java.JavaSparkContext
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.serve.BatchConsumer
import dev.spindle.spark.serve.FeedBatch
import dev.spindle.spark.serve.FeedInputs
import dev.spindle.spark.serve.FeedSettings
import dev.spindle.spark.serve.FeedTask

/**
 * What a feed task tells the progress line (its `ProgressCounters`, as the driver's listener sums
 * them): samples counted as the sample path produces them, not once per delivered batch;
 * quarantined samples counted; stages named for what they do (no `decode` where nothing is
 * decoded; the consumer stage named `trainer` when trainers consume).
 */
class FeedProgressSuite extends AnyFunSuite with SparkFixture {
  import FeedData._

  private val Counts = Seq(13, 7, 21, 9, 15) // 65 samples: world 1, batches of 8: 8 batches

  /**
   * Runs epoch 0 of `in` (world 1, batches of 8) on this thread into `consumer`, counting into
   * fresh counters (the task runs where they were made, so their values are the task's own).
   */
  private def feed(in: Path, consumer: BatchConsumer, counters: ProgressCounters): Unit = {
    val m = manifest(in)
    val plan = EpochPlan.create(m, spec(3, 0, 1, 8))
    val inputs = JavaSparkContext.fromSparkContext(spark.sparkContext).broadcast(FeedInputs.of(plan, m))
    try {
      val conf = Map("spark.spindle.image.size" -> "8", "spark.spindle.maxFailures" -> "10")
      val task = new FeedTask("progress", inputs, FeedSettings.from(conf.asJava, m),
        new HadoopConf(spark.sparkContext.hadoopConfiguration), counters)
      for (slices <- FeedPartitions.split(plan, plan.batchesPerRank(), 1).asScala)
        task.run(slices, consumer, UUID.randomUUID().toString)
    } finally inputs.destroy()
  }

  /** A consumer that, given its first batch, waits until `counters` count more than `atLeast`. */
  private final class Watching(counters: ProgressCounters, atLeast: Long, name: String)
      extends BatchConsumer {
    val seenDuringFirst = ArrayBuffer[Long]()
    var batches = 0

    override def accept(b: FeedBatch): Unit = {
      if (batches == 0) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (counters.samples() < atLeast && System.nanoTime() < deadline) Thread.sleep(20)
        seenDuringFirst += counters.samples()
      }
      batches += 1
    }

    override def stageName(): String = name
  }

  test("a preprocess output: samples count as they are produced, before the first batch is consumed; no decode stage") {
    TestFiles.withTempDir("progress-prep") { dir =>
      val prep = Preprocessed.write(spark, tars(dir.resolve("in"), Counts), dir.resolve("prep"), "arrow")
      val counters = ProgressCounters.register(spark.sparkContext)
      val consumer = new Watching(counters, 8, "sink")
      feed(prep, consumer, counters)
      // while the consumer held batch 0, the 8 rows it holds had been counted (and maybe more)
      assert(consumer.seenDuringFirst.head >= 8, consumer.seenDuringFirst)
      assert(consumer.batches == 8 && counters.samples() == 64 && counters.quarantined() == 0)
      assert(counters.stages().keySet.asScala == Set("read", "check", "batch", "sink"),
        "nothing is decoded: the stage that checks stored rows is not called decode")
    }
  }

  test("shards with bad samples: quarantined samples counted; a trainer consumer is named as such") {
    TestFiles.withTempDir("progress-bad") { dir =>
      val in = tars(dir.resolve("in"), Counts, bad = Set((0, 2), (2, 5)))
      val counters = ProgressCounters.register(spark.sparkContext)
      val consumer = new Watching(counters, 8, "trainer")
      feed(in, consumer, counters)
      assert(consumer.seenDuringFirst.head >= 8, consumer.seenDuringFirst)
      assert(counters.samples() == 64 && counters.quarantined() == 2)
      assert(counters.stages().keySet.asScala == Set("read", "decode", "batch", "trainer"))
    }
  }
}
