package dev.spindle.gpu.device

import java.nio.ByteBuffer

import org.scalatest.funsuite.AnyFunSuite

/** Discovery degrades to the host device; the host device keeps the Device contract. */
class DeviceDiscoverySuite extends AnyFunSuite {

  test("auto picks CUDA when a device is present and the host device otherwise, never crashing") {
    val probe = DeviceDiscovery.probeCuda()
    info(s"CUDA probe: ${probe.deviceCount()} device(s): ${probe.detail()}")
    val d = DeviceDiscovery.open(DeviceDiscovery.Choice.AUTO, 0)
    try {
      val expected = if (probe.deviceCount() > 0) DeviceKind.CUDA else DeviceKind.HOST
      assert(d.kind() == expected)
    } finally d.close()
  }

  test("asking for CUDA without a device fails with the probe's reason") {
    val probe = DeviceDiscovery.probeCuda()
    val missing = math.max(probe.deviceCount(), 0) + 7
    val e = intercept[IllegalStateException](DeviceDiscovery.open(DeviceDiscovery.Choice.CUDA, missing))
    assert(e.getMessage.contains(s"CUDA device $missing unavailable"))
    assert(e.getMessage.contains(probe.detail()))
  }

  test("host is always available by choice") {
    val d = DeviceDiscovery.open(DeviceDiscovery.Choice.HOST, 3)
    assert(d.kind() == DeviceKind.HOST && d.ordinal() == -1)
    d.close()
    d.close()
  }

  test("device and choice names parse, and bad ones are named in the error") {
    assert(DeviceKind.parse("CUDA") == DeviceKind.CUDA)
    assert(DeviceDiscovery.Choice.parse("host") == DeviceDiscovery.Choice.HOST)
    assert(ElementType.parse("float16") == ElementType.FLOAT16)
    val e = intercept[IllegalArgumentException](DeviceKind.parse("tpu"))
    assert(e.getMessage == "Invalid device: 'tpu' (must be cuda or host)")
  }

  test("host device copies bytes and refuses slabs of 2 GiB or more without allocating") {
    val d = new HostDevice()
    val e = intercept[IllegalArgumentException](d.allocateHost(Device.MAX_HOST_SLAB_BYTES))
    assert(e.getMessage.contains("Invalid host slab size"))
    val src = d.allocateHost(64)
    val dst = d.allocateDevice(128)
    val stream = d.openStream(2)
    try {
      for (i <- 0 until 64) org.apache.arrow.memory.util.MemoryUtil.putByte(src.address() + i, i.toByte)
      stream.copyToDevice(src, 0, dst, 32, 64)
      stream.record(1)
      assert(stream.isComplete(1))
      intercept[IndexOutOfBoundsException](stream.copyToDevice(src, 0, dst, 100, 64))
      intercept[IndexOutOfBoundsException](stream.record(2))
      val back = ByteBuffer.allocateDirect(64)
      d.copyToHost(dst, 32, back)
      for (i <- 0 until 64) assert(back.get(i) == i.toByte)
    } finally {
      stream.close()
      dst.close()
      src.close()
      src.close()
      d.close()
    }
    intercept[IllegalStateException](src.address())
  }

  test("normalize spec validates its values and computes the shared table") {
    val s = NormalizeSpec.imagenet(ElementType.FLOAT32, 2, 3)
    val t = s.table()
    assert(t.length == 6)
    assert(t(0) == 1f / (255f * 0.229f) && t(3) == -0.485f / 0.229f)
    val e = intercept[IllegalArgumentException](
      new NormalizeSpec(ElementType.FLOAT32, 2, 2, 3, Array(0f, 0f, 0f), Array(1f, 0f, 1f)))
    assert(e.getMessage == "Invalid std: 0.0 (must be finite and > 0)")
    intercept[IllegalArgumentException](
      new NormalizeSpec(ElementType.FLOAT32, 2, 2, 3, Array(0f), Array(1f, 1f, 1f)))
    assert(s == NormalizeSpec.imagenet(ElementType.FLOAT32, 2, 3))
  }
}
