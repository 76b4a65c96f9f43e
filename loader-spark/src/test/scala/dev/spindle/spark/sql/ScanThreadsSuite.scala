package dev.spindle.spark.sql

import dev.spindle.spark.samples.TaskThreadsSuite
import org.scalatest.funsuite.AnyFunSuite

/** A scan task of the spindle data source shares the CPU pool by the one rule (TaskThreadsSuite). */
class ScanThreadsSuite extends AnyFunSuite {
  test("a scan task decodes as many samples at once as the rule gives, decoding or not") {
    for ((threads, pool, inFlight) <- TaskThreadsSuite.Cases; decode <- Seq(true, false)) {
      val settings = ScanSettings.of("/in", decode, null, null, dev.spindle.spark.config.Settings.read(TaskThreadsSuite.conf(threads)), null)
      assert(SpindlePartitionReader.spec("t", settings, pool).concurrency() == inFlight,
        s"threads $threads pool $pool decode $decode")
    }
  }

  test("rows per columnar batch are the shared sample settings' batch size") {
    val s = ScanSettings.of("/in", true, null, null, dev.spindle.spark.config.Settings.read(java.util.Map.of("spark.spindle.batchSize", "7")), null)
    assert(s.batchSize() == 7 && s.sample().batchSize() == 7)
    assert(SpindlePartitionReader.spec("t", s, 2).batchSize() == 7)
  }
}
