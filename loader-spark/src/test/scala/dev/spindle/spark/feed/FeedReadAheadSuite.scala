package dev.spindle.spark.feed

import java.util.UUID
import java.util.concurrent.atomic.AtomicInteger

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import dev.spindle.spark.manifest.{Manifest, ShardCatalog}
import dev.spindle.spark.plan.{EpochPlan, Remainder}
import dev.spindle.spark.serve.{BatchConsumer, FeedInputs, FeedSettings, FeedSlice, FeedTask, RankLeg, TaskOutcome}
import dev.spindle.spark.shard.{HadoopConf, ParquetColumns}
import dev.spindle.spark.testkit.{CountingFileSystem, SparkFixture, TestFiles}
import org.apache.spark.api.java.JavaSparkContext
import org.scalatest.funsuite.AnyFunSuite

/**
 * A feed task's rows read ahead ([[FeedTask#readAhead]], as `train` reads each epoch's first group
 * while the previous epoch's last rows decode): the run from them delivers the same rows, keys,
 * labels and pixels as a run that reads everything itself, reads no byte twice, and tells its
 * caller once, before its last batch is delivered, that every sample was read; rows read ahead for
 * other slices, or already used, are not taken.
 */
class FeedReadAheadSuite extends AnyFunSuite with SparkFixture {
  import FeedData._
  import FeedStandInSuite.Got

  private val Counts = Seq(13, 7, 21) // 41 samples: world 2, batches of 4: 5 batches per rank

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    CountingFileSystem.register(spark.sparkContext.hadoopConfiguration)
  }

  private def manifestThroughCounter(in: String): Manifest = {
    val conf = spark.sparkContext.hadoopConfiguration
    new ShardCatalog(conf, 1000, ParquetColumns.DEFAULT).list(in, ShardCatalog.Counter.onThisThread(conf))
  }

  /** What one run delivered, the bytes it read from the shards, and its outcome. */
  private final case class Ran(got: Seq[Got], tarBytes: Long, outcome: TaskOutcome)

  private def run(task: FeedTask, slices: java.util.List[FeedSlice], first: FeedTask.ReadAhead = null,
      whenRead: Runnable = null, onBatch: Got => Unit = _ => ()): Ran = {
    val got = ArrayBuffer[Got]()
    val consumer: BatchConsumer = b => { val g = Got.of(b); onBatch(g); got += g }
    val before = CountingFileSystem.bytesRead(".tar")
    val outcome = task.run(slices, consumer, UUID.randomUUID().toString, first, whenRead)
    Ran(got.toSeq, CountingFileSystem.bytesRead(".tar") - before, outcome)
  }

  private def withTask(body: (FeedTask, EpochPlan) => Unit): Unit =
    TestFiles.withTempDir("feed-read-ahead") { dir =>
      val in = CountingFileSystem.uri(tars(dir.resolve("in"), Counts))
      val m = manifestThroughCounter(in)
      val plan = EpochPlan.create(m, spec(3, 0, 2, 4, Remainder.DROP_LAST))
      val inputs = JavaSparkContext.fromSparkContext(spark.sparkContext).broadcast(FeedInputs.of(plan, m))
      try {
        // groups of 2 batches: several groups per rank, so the first is not the last
        val conf = Map("spark.spindle.image.size" -> "8", "spark.spindle.feed.readBatches" -> "2")
        body(new FeedTask("read-ahead", inputs, FeedSettings.from(conf.asJava, m),
          new HadoopConf(spark.sparkContext.hadoopConfiguration)), plan)
      } finally inputs.destroy()
    }

  test("a run from rows read ahead delivers what a plain run does, reading each byte once, and says when all was read") {
    withTask { (task, plan) =>
      val batches = plan.batchesPerRank()
      assert(batches == 5)
      val slices = RankLeg.slices(0, 0, batches)
      val plain = run(task, slices)
      assert(plain.got.map(_.batch) == (0 until batches))
      assert(plain.tarBytes > 0)

      val readBefore = CountingFileSystem.bytesRead(".tar")
      val first = task.readAhead(slices)
      val aheadBytes = CountingFileSystem.bytesRead(".tar") - readBefore
      assert(aheadBytes > 0 && aheadBytes < plain.tarBytes, s"the first group read ahead: $aheadBytes bytes")

      val calls = new AtomicInteger()
      val deliveredWhenRead = new AtomicInteger(-1)
      val delivered = new AtomicInteger()
      val whenRead: Runnable = () => { calls.incrementAndGet(); deliveredWhenRead.set(delivered.get) }
      val ahead = run(task, slices, first, whenRead, _ => delivered.incrementAndGet())
      assert(ahead.got == plain.got, "the same batches, rows, keys, labels, weights and pixels")
      assert(aheadBytes + ahead.tarBytes == plain.tarBytes, "no byte read twice, none left out")
      assert(ahead.outcome.samplesRead() == plain.outcome.samplesRead())
      assert(ahead.outcome.bytesIn() == plain.outcome.bytesIn())
      assert(ahead.outcome.io() == plain.outcome.io(), "the read ahead's reads are the run's")
      assert(ahead.outcome.runs() == plain.outcome.runs(), "the same digests and counts")
      assert(calls.get == 1, "told once that every sample was read")
      assert(deliveredWhenRead.get >= 0 && deliveredWhenRead.get < batches,
        s"told before the last batch was delivered (${deliveredWhenRead.get} were)")
    }
  }

  test("rows read ahead for other slices are not taken, and rows read ahead are taken once") {
    withTask { (task, plan) =>
      val batches = plan.batchesPerRank()
      val rank0 = RankLeg.slices(0, 0, batches)
      val rank1 = RankLeg.slices(1, 0, batches)
      val resumed = RankLeg.slices(0, 2, batches) // a leg whose trainer resumes at batch 2
      val plain0 = run(task, rank0)
      val plain1 = run(task, rank1)
      val plainResumed = run(task, resumed)
      assert(plainResumed.got.map(_.batch) == (2 until batches))

      val first = task.readAhead(rank0)
      val other = run(task, rank1, first)
      assert(other.got == plain1.got && other.tarBytes == plain1.tarBytes, "rank 1 read by itself")
      val elsewhere = run(task, resumed, first)
      assert(elsewhere.got == plainResumed.got && elsewhere.tarBytes == plainResumed.tarBytes)
      val taken = run(task, rank0, first)
      assert(taken.got == plain0.got && taken.tarBytes < plain0.tarBytes, "rank 0 from the rows read ahead")
      val again = run(task, rank0, first)
      assert(again.got == plain0.got && again.tarBytes == plain0.tarBytes, "used once: read again")
    }
  }

  test("a run whose only group was read ahead is told at once that every sample was read") {
    withTask { (task, plan) =>
      val slices = RankLeg.slices(0, 0, 2) // one group of 2 batches
      val first = task.readAhead(slices)
      val calls = new AtomicInteger()
      val delivered = new AtomicInteger()
      val deliveredWhenRead = new AtomicInteger(-1)
      val r = run(task, slices, first,
        () => { calls.incrementAndGet(); deliveredWhenRead.set(delivered.get) }, _ => delivered.incrementAndGet())
      assert(r.got.map(_.batch) == Seq(0, 1) && r.tarBytes == 0L, "nothing left to read")
      assert(calls.get == 1 && deliveredWhenRead.get == 0)
    }
  }
}
