package dev.spindle.gpu.cuda

import java.nio.{ByteBuffer, ByteOrder}

import dev.spindle.gpu.device.{Device, DeviceDiscovery, ElementType, HostNormalizer, NormalizeSpec}
import org.apache.arrow.memory.util.MemoryUtil
import org.scalatest.funsuite.AnyFunSuite

import scala.util.Random

/**
 * CUDA-only checks on device 0: bytes survive the async copy, the PTX kernel matches the CPU
 * path bit for bit, pinned slabs of 2 GiB are refused. Cancelled, with the reason, without a GPU.
 */
class CudaDeviceSuite extends AnyFunSuite {

  test("the PTX resource is present and names both kernels (no GPU needed)") {
    val ptx = new String(NormalizeKernels.ptx(), "US-ASCII")
    assert(ptx.endsWith("\u0000"), "cuModuleLoadData needs NUL-terminated PTX")
    assert(ptx.contains(".entry spindle_normalize_f32"))
    assert(ptx.contains(".entry spindle_normalize_f16"))
  }

  test("probing without a driver reports zero devices instead of throwing") {
    val probe = new CudaDeviceProvider().probe()
    info(s"probe: ${probe.deviceCount()} (${probe.detail()})")
    assert(probe.deviceCount() >= 0)
    assert(probe.detail().nonEmpty)
  }

  test("a missing driver is reported in one line naming the library") {
    val e = new UnsatisfiedLinkError("Error while loading native library \"JCudaDriver\"\n" +
      "Stack trace...\n\tat x\njava.lang.UnsatisfiedLinkError: /tmp/libJCudaDriver.so: " +
      "libcuda.so.1: cannot open shared object file: No such file or directory\n\tat y")
    assert(CudaDeviceProvider.summarize(e) ==
      "UnsatisfiedLinkError: libcuda.so.1: cannot open shared object file: No such file or directory")
  }

  def withCuda(f: Device => Unit): Unit = {
    if (!DeviceDiscovery.cudaAvailable(0)) {
      cancel("no CUDA device: " + DeviceDiscovery.probeCuda().detail())
    }
    val d = DeviceDiscovery.open(DeviceDiscovery.Choice.CUDA, 0)
    try f(d) finally d.close()
  }

  test("bytes copied with cuMemcpyHtoDAsync read back identical") {
    withCuda { d =>
      val n = 3 << 20
      val src = d.allocateHost(n)
      val dst = d.allocateDevice(n + 4096)
      val stream = d.openStream(2)
      try {
        val rnd = new Random(1)
        val bytes = new Array[Byte](n)
        rnd.nextBytes(bytes)
        MemoryUtil.copyToMemory(bytes, 0, src.address(), n)
        stream.copyToDevice(src, 0, dst, 4096, n)
        stream.record(1)
        while (!stream.isComplete(1)) Thread.onSpinWait()
        val back = ByteBuffer.allocateDirect(n)
        d.copyToHost(dst, 4096, back)
        val out = new Array[Byte](n)
        back.get(out)
        assert(java.util.Arrays.equals(bytes, out))
      } finally {
        stream.close()
        dst.close()
        src.close()
      }
    }
  }

  for (dtype <- Seq(ElementType.FLOAT32, ElementType.FLOAT16)) {
    test(s"the $dtype kernel matches the host normaliser bit for bit") {
      withCuda { d =>
        val spec = NormalizeSpec.imagenet(dtype, 224, 224)
        val rows = 3
        val in = rows * spec.inputBytesPerImage()
        val out = rows * spec.outputBytesPerImage()
        val table = spec.table()
        val host = d.allocateHost(in + 64)
        val dev = d.allocateDevice(256 + in + out)
        val stream = d.openStream(1)
        val cpu = MemoryUtil.allocateMemory(out)
        try {
          val bytes = new Array[Byte](in)
          new Random(2).nextBytes(bytes)
          MemoryUtil.copyToMemory(bytes, 0, host.address(), in)
          for (i <- table.indices) {
            MemoryUtil.putInt(host.address() + in + 4 * i, java.lang.Float.floatToRawIntBits(table(i)))
          }
          stream.copyToDevice(host, in, dev, 0, 4L * table.length)
          stream.copyToDevice(host, 0, dev, 256, in)
          stream.normalize(dev, 256, dev, 256 + in, dev, 0, rows, spec)
          stream.synchronize()
          val gpu = ByteBuffer.allocateDirect(out.toInt).order(ByteOrder.LITTLE_ENDIAN)
          d.copyToHost(dev, 256 + in, gpu)
          HostNormalizer.normalize(host.address(), cpu, rows, spec, table)
          val ref = MemoryUtil.directBuffer(cpu, out.toInt).order(ByteOrder.LITTLE_ENDIAN)
          assert(gpu.equals(ref), "device and host normalisation differ")
        } finally {
          MemoryUtil.freeMemory(cpu)
          stream.close()
          dev.close()
          host.close()
        }
      }
    }
  }

  test("a pinned slab of 2 GiB or more is refused before anything is allocated") {
    withCuda { d =>
      val e = intercept[IllegalArgumentException](d.allocateHost(Device.MAX_HOST_SLAB_BYTES))
      assert(e.getMessage.contains("Invalid pinned slab size"))
    }
  }
}
