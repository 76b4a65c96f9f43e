package dev.spindle.spark.serve

import dev.spindle.spark.samples.TaskThreadsSuite
import org.scalatest.funsuite.AnyFunSuite

/**
 * A feed task's share of the CPU pool follows the one rule (TaskThreadsSuite); train's rank tasks
 * run the same FeedTask (RankServeTask) with the same FeedSettings.
 */
class FeedThreadsSuite extends AnyFunSuite {
  test("a feed or train task decodes as many samples at once as the rule gives") {
    TaskThreadsSuite.Cases.foreach { case (threads, pool, inFlight) =>
      val settings = new FeedSettings(TaskThreadsSuite.settings(threads), 4)
      assert(FeedTask.pathSpec("t", settings, 4, pool).concurrency() == inFlight, s"threads $threads pool $pool")
    }
  }
}
