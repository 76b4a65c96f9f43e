package dev.spindle.gpu.cuda

import java.time.Duration

import dev.spindle.gpu.device.{Device, DeviceDiscovery, NormalizeSpec}
import dev.spindle.gpu.feed.{FeederConfig, GpuFeeder, TestBatches}
import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite

/**
 * CUDA IPC export on device 0, inside the JVM: the handle, the allocation range and the offsets a
 * trainer receives. Cancelled, with the reason, without a GPU (the cross-process path is
 * CudaBridgeSuite's).
 */
class CudaIpcSuite extends AnyFunSuite {

  private def withCuda(f: Device => Unit): Unit = {
    if (!DeviceDiscovery.cudaAvailable(0)) {
      cancel("no CUDA device: " + DeviceDiscovery.probeCuda().detail())
    }
    val d = DeviceDiscovery.open(DeviceDiscovery.Choice.CUDA, 0)
    try f(d) finally d.close()
  }

  test("JCuda still keeps the handle bytes in CUipcMemHandle.reserved (no GPU needed)") {
    val h = new jcuda.driver.CUipcMemHandle()
    assert(CudaIpc.bytesOf(h).length == 64)
  }

  test("a device slab exports a 64-byte, non-zero handle of its whole allocation") {
    withCuda { d =>
      val buf = d.allocateDevice(3 << 20)
      try {
        val e = buf.exportIpc().orElseThrow()
        info(s"$e")
        assert(e.ordinal == 0)
        assert(e.handle().length == 64 && e.handle().exists(_ != 0), "handle is all zeros")
        assert(e.base == buf.address(), "a cuMemAlloc slab is its own allocation")
        assert(e.size >= buf.size())
        assert(e.offsetOf(buf.address() + 4096, 256) == 4096)
        val again = buf.exportIpc().get
        assert(again.base == e.base && again.size == e.size)
        info("a second export has " + (if (again.handle().sameElements(e.handle())) "the same"
          else "different") + " handle bytes")
      } finally buf.close()
      val closed = intercept[IllegalStateException](buf.exportIpc())
      assert(closed.getMessage.contains("is closed"))
    }
  }

  test("a CUDA feeder's batches lie inside its exported slab, at allocation-relative offsets") {
    withCuda { _ =>
      val feeder = GpuFeeder.open(DeviceDiscovery.open(DeviceDiscovery.Choice.CUDA, 0),
        FeederConfig.of(4, NormalizeSpec.raw(48, 1, 1)).withSlots(2))
      val alloc = new RootAllocator()
      try {
        val e = feeder.exportDeviceMemory().orElseThrow()
        for (i <- 0 until 4) {
          val root = TestBatches.build(alloc, i, 4, 48, tensor = true)
          try feeder.offer(root, Duration.ofSeconds(30)) finally root.close()
          val b = feeder.next(Duration.ofSeconds(30))
          try {
            val img = e.offsetOf(b.imagePointer(), b.imageBytes())
            val lab = e.offsetOf(b.labelsPointer(), 8L * b.rows())
            assert(img % 256 == 0 && lab % 256 == 0, s"offsets $img, $lab not 256-aligned")
            assert(img != lab)
          } finally b.close()
        }
      } finally {
        feeder.close()
        alloc.close()
      }
      intercept[IllegalStateException](feeder.exportDeviceMemory())
    }
  }
}
