package dev.spindle.spark.metrics

import java.time.Duration

import com.codahale.metrics.MetricRegistry
import dev.spindle.gpu.device.{NormalizeSpec, SharedMemoryDevice}
import dev.spindle.gpu.feed.{FeederConfig, GpuFeeder}
import dev.spindle.spark.batch.ImageBatch
import dev.spindle.spark.serve.FeederConsumer
import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite
import scala.jdk.CollectionConverters._

/** The feeder gauges over a real host (shared-memory) feeder installed in this JVM. */
class FeederMetricsSuite extends AnyFunSuite {
  private def value(reg: MetricRegistry, name: String): Double =
    reg.getGauges.get(name).getValue.asInstanceOf[Number].doubleValue

  test("feeder gauges follow the bytes copied, the slots in use and the trainer's wait") {
    val reg = new MetricRegistry
    val metrics = new ExecutorMetrics(reg)
    metrics.register()
    assert(value(reg, "feeder.h2dBytes") == 0, "no feeder yet")
    val alloc = new RootAllocator()
    val feeder = GpuFeeder.open(new SharedMemoryDevice(), FeederConfig.of(4, NormalizeSpec.raw(8, 8, 3)))
    val batch = new ImageBatch(alloc, 8, 8, 3, 4)
    FeederConsumer.install(Map(Int.box(0) -> feeder).asJava)
    try {
      (0 until 4).foreach(i => batch.setRow(i, i, s"k$i", i))
      feeder.offer(batch.seal(4), Duration.ofSeconds(30))
      val leased = feeder.next(Duration.ofSeconds(30))
      assert(value(reg, "feeder.h2dBytes") >= 4 * 8 * 8 * 3)
      assert(value(reg, "feeder.slotsBusy") >= 1, "the leased slot")
      assert(value(reg, "feeder.trainerWaitMs") >= 0 && value(reg, "feeder.h2dGbps") > 0)
      leased.close()
    } finally {
      FeederConsumer.uninstall()
      feeder.close()
      batch.close()
      alloc.close()
      metrics.close()
    }
    assert(value(reg, "feeder.h2dBytes") == 0, "uninstalled and closed: no longer counted")
  }

  test("a feeder that two registered sources hold is counted once") {
    val feeder = GpuFeeder.open(new SharedMemoryDevice(), FeederConfig.of(2, NormalizeSpec.raw(8, 8, 3)))
    val held = new java.util.concurrent.CopyOnWriteArrayList[GpuFeeder]()
    ActiveFeeders.register(() => held)
    ActiveFeeders.register(() => held)
    try {
      assert(!ActiveFeeders.all().contains(feeder))
      held.add(feeder)
      assert(ActiveFeeders.all().asScala.count(_ eq feeder) == 1)
    } finally {
      held.clear()
      feeder.close()
    }
  }
}
