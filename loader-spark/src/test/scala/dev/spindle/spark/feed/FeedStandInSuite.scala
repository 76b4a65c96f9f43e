package dev.spindle.spark.feed
import java.nio.file.Path
import java.util.UUID

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.batch.{BatchSchema, FixedShapeTensorVector}
import dev.spindle.spark.shard.HadoopConf
import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.metrics.QuarantineRecord
import dev.spindle.spark.plan.{EpochPlan, Remainder}
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.serve.{BatchConsumer,FeedBatch,FeedInputs,FeedSettings,FeedTask,FeederConsumer}
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import java.nio.ByteBuffer
import java.time.Duration

import dev.spindle.gpu.device.{HostDevice, NormalizeSpec}
import dev.spindle.gpu.feed.{FeederConfig, GpuFeeder, SlotWriter}
import org.apache.arrow.vector.{IntVector, VarCharVector}
import org.apache.spark.api.java.JavaSparkContext
import org.scalatest.funsuite.AnyFunSuite

/**
 * Rows that carry no sample of their own (stand-ins of quarantined samples, padding) and the rows
 * around them: every column of every row a feed task delivers (index, key, label, loss weight,
 * pixels) against what `preprocess` writes for the same samples and against the quarantine list,
 * with bad samples at random and at the start, middle and end of batches, consecutive, and filling
 * a whole batch.
 */
class FeedStandInSuite extends AnyFunSuite with SparkFixture {
  import FeedData._
  import FeedStandInSuite._

  private val Counts = Seq(13, 7, 21) // 41 samples: world 2, batches of 4, PAD: 6 batches per rank
  private val Ignored = BatchSchema.IGNORED_LABEL

  /** Every batch epoch 0's feed tasks deliver (seed 3, world 2, batches of 4, PAD), as consumed. */
  private def delivered(in: Path, m: Manifest, plan: EpochPlan,
      ring: Boolean = false): (Seq[Got], Seq[QuarantineRecord]) = {
    val inputs = JavaSparkContext.fromSparkContext(spark.sparkContext).broadcast(FeedInputs.of(plan, m))
    try {
      val conf = Map("spark.spindle.image.size" -> "8", "spark.spindle.maxFailures" -> "1000")
      val task = new FeedTask("stand-ins", inputs, FeedSettings.from(conf.asJava, m),
        new HadoopConf(spark.sparkContext.hadoopConfiguration))
      val got = ArrayBuffer[Got]()
      val consumer: BatchConsumer = b => got += Got.of(b)
      val quarantined = ArrayBuffer[QuarantineRecord]()
      val ringConsumer = if (ring) new RingConsumer(plan.worldSize(), got) else null
      try {
        for (slices <- FeedPartitions.split(plan, plan.batchesPerRank(), 1).asScala)
          quarantined ++= task.run(slices, if (ring) ringConsumer else consumer,
            UUID.randomUUID().toString).quarantined().asScala
      } finally if (ring) ringConsumer.close()
      (got.toSeq, quarantined.toSeq)
    } finally inputs.destroy()
  }

  /**
   * Feeds `Counts` with the samples at plan positions `bad(plan)` broken, preprocesses the same
   * shards, and checks every delivered row against the preprocess output and the quarantine list.
   */
  private def check(dir: Path, bad: EpochPlan => Set[Long], ring: Boolean = false): Unit = {
    val planned = EpochPlan.create(manifest(tars(dir.resolve("plan"), Counts)), spec(3, 0, 2, 4, Remainder.PAD))
    val badIndices = bad(planned)
    val offsets = manifest(dir.resolve("plan")).offsets()
    val badSamples = badIndices.map { i =>
      val s = offsets.lastIndexWhere(_ <= i)
      (s, (i - offsets(s)).toInt)
    }
    val in = tars(dir.resolve("in"), Counts, badSamples)
    val m = manifest(in)
    val plan = EpochPlan.create(m, spec(3, 0, 2, 4, Remainder.PAD))
    assert((0 until 2).forall(r => plan.rank(r).indices(0, 6).toSeq == planned.rank(r).indices(0, 6).toSeq))
    val out = dir.resolve("prep")
    val report = PreprocessJob.run(spark, in.toString, out.toString, false, Map(
      "spark.spindle.image.size" -> "8", "spark.spindle.batchSize" -> "4",
      "spark.spindle.partitionBytes" -> "1", "spark.spindle.maxFailures" -> "1000").asJava)
    val prep = ArrowFiles.readAll(out).map(r => r.index -> r).toMap
    val prepQuarantine = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]]
      .asScala.map(q => q.get("index").asInstanceOf[Number].longValue -> q.get("key").toString).toMap
    assert(prep.keySet ++ prepQuarantine.keySet == (0L until 41L).toSet)
    assert(prepQuarantine.keySet == badIndices, "preprocess quarantines exactly the broken samples")

    val (got, quarantined) = delivered(in, m, plan, ring)
    assert(got.map(g => (g.rank, g.batch)).sorted == (for (r <- 0 until 2; k <- 0 until 6) yield (r, k)))
    assert(quarantined.map(q => q.index() -> q.key()).toMap == prepQuarantine)
    for (g <- got) {
      val rows = plan.rank(g.rank).batch(g.batch).toSeq
      val padded = plan.rank(g.rank).paddedIn(g.batch)
      assert(g.padded == padded, g.what)
      assert(g.rows.map(_.index) == rows, g.what)
      // rows of good samples first (a stand-in must not disturb them), then the stand-ins
      for ((row, r) <- g.rows.zipWithIndex; p <- prep.get(row.index)) {
        val at = s"${g.what} row $r (index ${row.index}, a good sample)"
        if (r >= rows.size - padded) {
          assert((row.key, row.label, row.weight, row.pixels) == (p.key, Ignored, 0f, sha(p.image)), at)
        } else {
          assert((row.key, row.label, row.weight, row.pixels) == (p.key, p.label, 1f, sha(p.image)), at)
        }
      }
      val firstGood = g.rows.find(r => prep.contains(r.index)).map(r => sha(prep(r.index).image))
      for ((row, r) <- g.rows.zipWithIndex if !prep.contains(row.index)) {
        val at = s"${g.what} row $r (index ${row.index}, a stand-in)"
        assert((row.key, row.label, row.weight) == (prepQuarantine(row.index), Ignored, 0f), at)
        assert(row.pixels == firstGood.getOrElse(sha(Seq.fill(p8)(0.toByte))),
          s"$at: the batch's first good row's pixels, or zeros")
      }
    }
  }

  private def sha(b: Seq[Byte]): String = FeedServeSuite.sha256(b.toArray)

  /** Bytes of one 8×8 RGB row. */
  private val p8 = 8 * 8 * 3

  test("stand-ins at the start, middle and end of batches, consecutive, and a whole bad batch") {
    TestFiles.withTempDir("standin-fixed") { dir =>
      check(dir, plan => {
        val r0 = (0 until 6).map(k => plan.rank(0).batch(k).toSeq)
        val r1 = (0 until 6).map(k => plan.rank(1).batch(k).toSeq)
        Set(r0(0)(0), r0(1)(1), r0(2)(3), r0(3)(1), r0(3)(2), r1(5)(3)) ++ r1(2) ++ r1(0).take(1)
      })
    }
  }

  test("stand-ins at random rows, several seeds") {
    for (seed <- Seq(1, 2, 3, 4)) {
      TestFiles.withTempDir(s"standin-random-$seed") { dir =>
        val random = new Random(seed)
        check(dir, _ => (0L until 41L).filter(_ => random.nextInt(4) == 0).toSet)
      }
    }
  }

  test("rows decoded straight into a feeder's ring slots: the same rows, keys, labels, weights and pixels, stand-ins included") {
    for (seed <- Seq(5, 6)) {
      TestFiles.withTempDir(s"standin-ring-$seed") { dir =>
        val random = new Random(seed)
        check(dir, plan => Set(plan.rank(0).batch(0)(0)) ++ plan.rank(1).batch(2) ++
          (0L until 41L).filter(_ => random.nextInt(5) == 0), ring = true)
      }
    }
  }

  test("every sample bad: every row is a stand-in of zeros") {
    TestFiles.withTempDir("standin-all") { dir =>
      check(dir, _ => (0L until 41L).toSet)
    }
  }
}

object FeedStandInSuite {
  /**
   * A consumer that has the task decode into ring slots of a host feeder per rank (as `feed
   * --serve` does), publishes each batch, then leases it as a trainer would and copies it out.
   */
  final class RingConsumer(world: Int, got: ArrayBuffer[Got]) extends BatchConsumer with AutoCloseable {
    private val feeders = (0 until world).map(_ =>
      GpuFeeder.open(new HostDevice(), FeederConfig.of(4, NormalizeSpec.raw(8, 8, 3)).withSlots(4)))

    override def claimSlot(rank: Int): SlotWriter = feeders(rank).claimSlot(Duration.ofSeconds(30))

    override def accept(b: FeedBatch): Unit = {
      assert(b.root == null && b.slot != null, "a batch written into its slot")
      b.slot.publish(b.rows)
      val d = feeders(b.key.rank).next(Duration.ofSeconds(30))
      try {
        val px = ByteBuffer.allocateDirect(d.imageBytes.toInt)
        d.copyImageTo(px)
        val rowBytes = d.imageBytes.toInt / d.rows
        val rows = (0 until d.rows).map { r =>
          val row = new Array[Byte](rowBytes)
          px.position(r * rowBytes)
          px.get(row)
          GotRow(d.index(r), d.key(r), d.label(r).toInt, d.weight(r), FeedServeSuite.sha256(row))
        }
        got += Got(b.key.rank, b.key.batch, b.padded, rows)
      } finally d.close()
    }

    override def close(): Unit = {
      feeders.foreach { f =>
        val s = f.stats()
        assert(s.hostCopyBytes == 0 && s.inPlaceBytes == s.h2dBytes && s.h2dBytes > 0,
          "every batch written in place, nothing copied on the host")
        f.close()
      }
    }
  }

  /** One delivered row, copied out of the batch. */
  final case class Got(rank: Int, batch: Int, padded: Int, rows: Seq[GotRow]) {
    def what: String = s"rank $rank batch $batch"
  }

  /** `pixels`: the SHA-256 of the row's bytes. */
  final case class GotRow(index: Long, key: String, label: Int, weight: Float, pixels: String)

  object Got {
    /** Copies `b` during the consumer's call, with the loss weights its feeder would be given. */
    def of(b: FeedBatch): Got = {
      val images = b.root.getVector(BatchSchema.IMAGE).asInstanceOf[FixedShapeTensorVector].getUnderlyingVector
      val rowBytes = images.getListSize
      val keys = b.root.getVector(BatchSchema.KEY).asInstanceOf[VarCharVector]
      val labels = b.root.getVector(BatchSchema.LABEL).asInstanceOf[IntVector]
      val unweighted = FeederConsumer.unweighted(b)
      val rows = (0 until b.rows).map { r =>
        val px = new Array[Byte](rowBytes)
        images.getDataVector.getDataBuffer.getBytes(r.toLong * rowBytes, px)
        GotRow(b.index(r), new String(keys.get(r), "UTF-8"), labels.get(r),
          if (unweighted.get(r)) 0f else 1f, FeedServeSuite.sha256(px))
      }
      Got(b.key.rank, b.key.batch, b.padded, rows)
    }
  }

}
