package dev.spindle.spark.preprocess

import dev.spindle.spark.samples.TaskThreadsSuite
import org.scalatest.funsuite.AnyFunSuite

/** A preprocess task's share of the CPU pool follows the one rule (TaskThreadsSuite). */
class PreprocessThreadsSuite extends AnyFunSuite {
  test("a preprocess task decodes as many samples at once as the rule gives, spark.spindle.threads included") {
    TaskThreadsSuite.Cases.foreach { case (threads, pool, inFlight) =>
      val spec = PreprocessTask.pathSpec("t", PreprocessSettings.from(TaskThreadsSuite.conf(threads)), pool)
      assert(spec.concurrency() == inFlight, s"threads $threads pool $pool")
    }
  }

  test("rows per Arrow record batch are the shared sample settings' batch size") {
    val s = PreprocessSettings.from(java.util.Map.of("spark.spindle.batchSize", "7"))
    assert(s.batchSize() == 7 && s.sample().batchSize() == 7)
    assert(PreprocessTask.pathSpec("t", s, 2).batchSize() == 7)
  }
}
