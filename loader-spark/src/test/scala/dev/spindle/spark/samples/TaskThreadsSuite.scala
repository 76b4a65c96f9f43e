package dev.spindle.spark.samples

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The one rule for a task's share of the executor-wide CPU pool ([[SampleSettings.threadsPerTask]],
 * [[SampleSettings#decodesInFlight]]): `spark.spindle.threads` when set, at most the pool's, else the
 * pool's; four decodes in flight per thread. Each job's path calls it: PreprocessThreadsSuite,
 * FeedThreadsSuite (feed and train), ScanThreadsSuite check the same [[TaskThreadsSuite.Cases]].
 */
class TaskThreadsSuite extends AnyFunSuite {
  import TaskThreadsSuite._

  test("spark.spindle.threads caps a task's threads at the pool's; 0 takes the whole pool") {
    assert(SampleSettings.threadsPerTask(0, 8) == 8)
    assert(SampleSettings.threadsPerTask(3, 8) == 3)
    assert(SampleSettings.threadsPerTask(16, 2) == 2)
    assert(SampleSettings.threadsPerTask(1, 1) == 1)
  }

  test("spark.spindle.batchSize is read once, into the settings every job's sample path shares") {
    val conf = Map("spark.spindle.batchSize" -> "7").asJava
    assert(SampleSettings.from(conf, null).batchSize() == 7)
    assert(SampleSettings.from(Map.empty[String, String].asJava, null).batchSize() == 256)
  }

  test("a task keeps four decodes in flight per thread it may use") {
    assert(SampleSettings.IN_FLIGHT_PER_THREAD == 4)
    Cases.foreach { case (threads, pool, inFlight) =>
      assert(settings(threads).decodesInFlight(pool) == inFlight, s"threads $threads pool $pool")
    }
  }
}

object TaskThreadsSuite {
  /** (spark.spindle.threads, threads of the executor's pool, decodes a task keeps in flight). */
  val Cases: Seq[(Int, Int, Int)] = Seq((0, 8, 32), (3, 8, 12), (16, 2, 8), (1, 1, 4), (2, 2, 8))

  /** The settings every job reads, with `spark.spindle.threads` = `threads`. */
  def conf(threads: Int): java.util.Map[String, String] =
    Map("spark.spindle.threads" -> threads.toString, "spark.spindle.image.size" -> "8").asJava

  def settings(threads: Int): SampleSettings =
    SampleSettings.from(conf(threads),
      BatchImages.decoding(dev.spindle.spark.config.SpindleConfig.uint8Transform(conf(threads))))
}
