package dev.spindle.gpu.feed

import java.time.Duration

import dev.spindle.gpu.device.{Device, ElementType, HostDevice, NormalizeSpec}
import dev.spindle.gpu.feed.TestBatches._

/** The ring contract on the host device: runs everywhere, including CI. */
class HostFeederContractSuite extends FeederContract {
  override def openDevice(): Device = new HostDevice()

  test("closing the feeder frees every slab, even with a lease and zero-copy batches out") {
    val device = new HostDevice()
    withAllocator { alloc =>
      val spec = NormalizeSpec.imagenet(ElementType.FLOAT16, H, W)
      val feeder = GpuFeeder.open(device, config(3, spec).withPinnedPool(1 << 20))
      val pinned = feeder.newPinnedAllocator(1 << 20)
      offer(feeder, alloc, 0)
      val root = build(pinned, 1, MaxRows, ImageBytes)
      feeder.offer(root, Long10s)
      root.close()
      val b = feeder.next(Long10s)
      assert(device.outstandingBytes() > 0)
      feeder.close(Duration.ofMillis(50))
      assert(!b.isValid)
      assert(device.outstandingBytes() == 0, "host or device slabs leaked")
      assert(pinned.getAllocatedMemory == 0)
      pinned.close()
    }
  }

  test("a feeder whose allocation fails part-way frees what it had allocated") {
    for (failAt <- 1 to 4) {
      val inner = new HostDevice()
      var calls = 0
      val failing = new Device {
        override def kind() = inner.kind()
        override def ordinal() = inner.ordinal()
        override def description() = "failing " + inner.description()
        private def count(): Unit = {
          calls += 1
          if (calls == failAt) throw new OutOfMemoryError(s"simulated failure of allocation $calls")
        }
        override def allocateHost(bytes: Long) = { count(); inner.allocateHost(bytes) }
        override def allocateDevice(bytes: Long) = { count(); inner.allocateDevice(bytes) }
        override def openStream(events: Int) = inner.openStream(events)
        override def copyToHost(src: dev.spindle.gpu.device.DeviceBuffer, off: Long,
            dst: java.nio.ByteBuffer): Unit = inner.copyToHost(src, off, dst)
        override def close(): Unit = inner.close()
      }
      val e = intercept[OutOfMemoryError](GpuFeeder.open(failing, config(2).withPinnedPool(4096)))
      assert(e.getMessage == s"simulated failure of allocation $failAt")
      assert(inner.outstandingBytes() == 0, s"slabs leaked when allocation $failAt failed")
      intercept[IllegalStateException](inner.allocateHost(16)) // the feeder closed its device
    }
  }

  test("a written slot's rows are the memory the trainer leases, and close frees every slab") {
    val device = new HostDevice()
    val feeder = GpuFeeder.open(device, config(3))
    val w = writeSlot(feeder, 4)
    val row0 = w.rowAddress(0)
    val left = writeSlot(feeder, 5) // claimed, never published: abandoned below
    w.publish(MaxRows)
    val b = feeder.next(Long10s)
    assert(b.imagePointer() == row0, "the batch is where the rows were written: no copy")
    assert(b.rows == MaxRows && b.key(MaxRows - 1) == key(4, MaxRows - 1))
    val closer = new Thread(() => feeder.close(Duration.ofMillis(50)))
    closer.start()
    Thread.sleep(100) // close waits for the claimed slot's writer
    left.close()
    closer.join(30000)
    assert(!closer.isAlive)
    assert(!b.isValid)
    assert(device.outstandingBytes() == 0, "host or device slabs leaked")
  }
}
