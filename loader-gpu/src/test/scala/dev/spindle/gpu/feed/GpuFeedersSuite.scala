package dev.spindle.gpu.feed

import java.util.concurrent.{Callable, Executors}

import dev.spindle.gpu.device.{DeviceDiscovery, NormalizeSpec}
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/** One lazily created feeder per device ordinal per JVM. */
class GpuFeedersSuite extends AnyFunSuite {
  val cfg: FeederConfig = FeederConfig.of(2, NormalizeSpec.raw(2, 2, 3)).withSlots(2)
  val host = DeviceDiscovery.Choice.HOST

  test("concurrent callers for one ordinal share a single feeder") {
    val pool = Executors.newFixedThreadPool(4)
    try {
      val calls = (0 until 8).map(_ => (() => GpuFeeders.get(40, host, cfg)): Callable[GpuFeeder])
      val feeders = pool.invokeAll(calls.asJava).asScala.map(_.get)
      assert(feeders.distinct.size == 1)
      assert(GpuFeeders.get(41, host, cfg) ne feeders.head, "another ordinal has its own feeder")
      assert(GpuFeeders.existing(40).get eq feeders.head)
    } finally {
      pool.shutdown()
      GpuFeeders.closeAll()
    }
    assert(GpuFeeders.existing(40).isEmpty && GpuFeeders.existing(41).isEmpty)
  }

  test("a conflicting config for an existing feeder is refused, naming both") {
    try {
      GpuFeeders.get(42, host, cfg)
      val e = intercept[IllegalStateException](GpuFeeders.get(42, host, cfg.withSlots(3)))
      assert(e.getMessage.contains("already exists"))
    } finally GpuFeeders.close(42)
  }

  test("a failed feeder is closed and replaced on the next get") {
    try {
      val first = GpuFeeders.get(44, host, cfg)
      first.fail(new RuntimeException("lease expired"))
      assert(first.failureCause().getMessage == "lease expired")
      val second = GpuFeeders.get(44, host, cfg)
      assert(second ne first)
      assert(first.isClosed && second.failureCause() == null)
    } finally GpuFeeders.close(44)
  }

  test("a closed feeder is replaced lazily by a new one") {
    try {
      val first = GpuFeeders.get(43, host, cfg)
      first.close()
      val second = GpuFeeders.get(43, host, cfg)
      assert(second ne first)
      assert(!second.isClosed)
    } finally GpuFeeders.close(43)
  }
}
