package dev.spindle.gpu.feed

import java.nio.ByteBuffer
import java.time.Duration
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicBoolean

import dev.spindle.gpu.device._
import dev.spindle.gpu.feed.TestBatches._
import dev.spindle.gpu.ring.SlotState
import org.scalatest.funsuite.AnyFunSuite

/**
 * The host device completes copies at once, so this suite wraps it in a device whose events
 * report completion only when the test opens a gate, as a busy GPU would: a slot must stay
 * COPYING (neither leasable nor reusable) until its event completes.
 */
class EventGatingSuite extends AnyFunSuite {
  val ImageBytes = 12

  final class GatedDevice(gate: AtomicBoolean) extends Device {
    private val inner = new HostDevice()
    override def kind(): DeviceKind = inner.kind()
    override def ordinal(): Int = inner.ordinal()
    override def description(): String = "gated " + inner.description()
    override def allocateHost(bytes: Long): HostBuffer = inner.allocateHost(bytes)
    override def allocateDevice(bytes: Long): DeviceBuffer = inner.allocateDevice(bytes)
    override def copyToHost(src: DeviceBuffer, off: Long, dst: ByteBuffer): Unit =
      inner.copyToHost(src, off, dst)
    override def close(): Unit = inner.close()
    override def openStream(events: Int): CopyStream = {
      val s = inner.openStream(events)
      new CopyStream {
        override def copyToDevice(src: HostBuffer, so: Long, dst: DeviceBuffer, d: Long, n: Long): Unit =
          s.copyToDevice(src, so, dst, d, n)
        override def normalize(src: DeviceBuffer, so: Long, dst: DeviceBuffer, d: Long,
            t: DeviceBuffer, to: Long, rows: Int, spec: NormalizeSpec): Unit =
          s.normalize(src, so, dst, d, t, to, rows, spec)
        override def record(event: Int): Unit = s.record(event)
        override def isComplete(event: Int): Boolean = gate.get && s.isComplete(event)
        override def synchronize(): Unit = s.synchronize()
        override def close(): Unit = s.close()
      }
    }
  }

  test("a slot becomes READY, and can be reused, only after its copy event completes") {
    val gate = new AtomicBoolean(true) // open while the feeder uploads its table
    withAllocator { alloc =>
      val cfg = FeederConfig.of(2, NormalizeSpec.raw(2, 2, 3)).withSlots(2)
      val feeder = GpuFeeder.open(new GatedDevice(gate), cfg)
      try {
        gate.set(false)
        for (n <- 0 until 2) {
          val root = build(alloc, n, 2, ImageBytes)
          try feeder.offer(root, Duration.ofSeconds(10)) finally root.close()
        }
        eventually(feeder.stats().ring().current(SlotState.COPYING) == 2)
        intercept[TimeoutException](feeder.next(Duration.ofMillis(200)))
        val third = build(alloc, 2, 2, ImageBytes)
        try intercept[TimeoutException](feeder.offer(third, Duration.ofMillis(200)))
        finally third.close()
        assert(feeder.stats().ring().current(SlotState.COPYING) == 2, "slots left COPYING early")
        assert(feeder.stats().batchesCopied == 0)
        gate.set(true)
        for (n <- 0 until 2) {
          val b = feeder.next(Duration.ofSeconds(10))
          try assert(b.index(0) == index(n, 0)) finally b.close()
        }
      } finally feeder.close()
    }
  }

  def eventually(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + 20_000_000_000L
    while (!cond) {
      assert(System.nanoTime() < deadline, "condition not reached in 20 s")
      Thread.sleep(5)
    }
  }
}
