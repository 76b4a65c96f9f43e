package dev.spindle.gpu.bridge

import java.nio.ByteOrder
import java.nio.file.Path

import dev.spindle.gpu.device.IpcExport
import dev.spindle.gpu.device.SharedMemoryDevice.SharedSegment
import org.scalatest.funsuite.AnyFunSuite

/** Memory kind 2 (CUDA IPC) as the bridge encodes it, from a synthetic export: no GPU needed. */
class ServedMemorySuite extends AnyFunSuite {
  private val handle = Array.tabulate[Byte](64)(i => (i * 7 + 1).toByte)
  private val exported = new IpcExport(1, handle, 0x7f0000000000L, 1L << 30)
  private val memory = new ServedMemory.CudaIpc(exported)

  test("the WELCOME block of kind 2 is i32 ordinal, the 64 handle bytes, i64 size") {
    val b = Wire.buffer(memory.blockBytes())
    memory.putBlock(b)
    assert(memory.kind() == 2 && !b.hasRemaining, "block size and content disagree")
    b.flip()
    assert(b.order() == ByteOrder.LITTLE_ENDIAN)
    assert(b.getInt() == 1)
    val h = new Array[Byte](64)
    b.get(h)
    assert(h.sameElements(handle))
    assert(b.getLong() == (1L << 30))
  }

  test("BATCH offsets are from the allocation's base and must lie inside it") {
    assert(memory.offsetOf(0x7f0000000000L + 4096, 256) == 4096)
    assert(memory.offsetOf(0x7f0000000000L + (1L << 30) - 8, 8) == (1L << 30) - 8)
    val e = intercept[IllegalArgumentException](
      memory.offsetOf(0x7f0000000000L + (1L << 30) - 4, 8))
    assert(e.getMessage.contains("outside the exported allocation at 0x7f0000000000"))
    intercept[IllegalArgumentException](memory.offsetOf(0x7f0000000000L - 1, 1))
  }

  test("only the feeder's own CUDA device is accepted, named as cuda:N") {
    memory.accept("cuda:1", 0)
    for (bad <- Seq("cuda:0", "cpu", "cuda", "cuda:01x", "cuda:1 ")) {
      val e = intercept[ProtocolException](memory.accept(bad, 3))
      assert(e.error == BridgeError.UNSUPPORTED_DEVICE)
      assert(e.getMessage == s"Invalid device: '$bad': rank 3's feeder runs on cuda:1 and serves "
        + "its memory by CUDA IPC; connect with device 'cuda:1' (numbered as the feeder sees it: "
        + "same CUDA_VISIBLE_DEVICES)")
    }
  }

  test("an export keeps its own copy of exactly 64 handle bytes") {
    val bytes = handle.clone()
    val e = new IpcExport(0, bytes, 256, 512)
    bytes(0) = 99
    assert(e.handle()(0) == handle(0))
    e.handle()(1) = 99
    assert(e.handle()(1) == handle(1))
    assert(intercept[IllegalArgumentException](new IpcExport(0, new Array[Byte](65), 0, 1))
      .getMessage == "Invalid CUDA IPC handle: 65 bytes (must be 64)")
    intercept[IllegalArgumentException](new IpcExport(-1, handle, 0, 1))
    intercept[IllegalArgumentException](new IpcExport(0, handle, 0, 0))
  }

  test("a shared-memory feeder accepts exactly 'cpu'; anything else is refused, abbreviated") {
    val shared = new ServedMemory.Shared(new SharedSegment(Path.of("/proc/1/fd/3"), 4096, 8192))
    shared.accept("cpu", 0)
    for (bad <- Seq("cpux", "", "CPU", "cpu ", "cuda:0", "cpu\n" + "x" * 100)) {
      val e = intercept[ProtocolException](shared.accept(bad, 2))
      assert(e.error == BridgeError.UNSUPPORTED_DEVICE, bad)
      assert(e.getMessage.contains("rank 2's feeder runs on host shared memory; connect with "
        + "device 'cpu'"), e.getMessage)
    }
    val huge = "x" * 1000000
    val e = intercept[ProtocolException](shared.accept(huge, 2))
    assert(e.getMessage == "Invalid device: '" + "x" * 64 + "…' (1000000 chars): rank 2's "
      + "feeder runs on host shared memory; connect with device 'cpu'")
    assert(intercept[ProtocolException](shared.accept("cpu\n" + "x" * 100, 2)).getMessage
      .startsWith("Invalid device: 'cpu\\n" + "x" * 60 + "…' (104 chars)"))
  }

  test("a CUDA feeder's refusal abbreviates the device too") {
    val e = intercept[ProtocolException](memory.accept("cuda:1" + "9" * 1000000, 0))
    assert(e.error == BridgeError.UNSUPPORTED_DEVICE)
    assert(e.getMessage.startsWith("Invalid device: 'cuda:1999"))
    assert(e.getMessage.length < 400, e.getMessage.length)
  }

  test("peer strings are quoted whole up to 64 chars, else cut with their length") {
    assert(PeerText.quote("cpu") == "'cpu'")
    assert(PeerText.quote("a" * 64) == "'" + "a" * 64 + "'")
    assert(PeerText.quote("a" * 65) == "'" + "a" * 64 + "…' (65 chars)")
    assert(PeerText.quote("a\u0000b\tc") == "'a\\u0000b\\tc'")
    assert(PeerText.quote(null) == "(none)")
  }
}
