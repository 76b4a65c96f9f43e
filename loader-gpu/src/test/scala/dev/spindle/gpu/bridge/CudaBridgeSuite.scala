package dev.spindle.gpu.bridge

import java.net.{StandardProtocolFamily, UnixDomainSocketAddress}
import java.nio.ByteBuffer
import java.nio.channels.SocketChannel
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import dev.spindle.gpu.bridge.BridgeFixture._
import dev.spindle.gpu.device.DeviceDiscovery
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/**
 * The CUDA IPC path end to end: a feeder on cuda:0, the bridge, and Python trainer processes on
 * cuda:0 that open the feeder's device slab by CUDA IPC and hash what their tensors hold. Every
 * test cancels, with the reason, without a CUDA device. The trainers' interpreter is
 * `SPINDLE_PYTHON` (torch with CUDA; cupy for the cupy tests, which cancel without it).
 */
class CudaBridgeSuite extends AnyFunSuite {

  private def cudaFeed(ids: Seq[Long], slots: Int): Feed = {
    if (!DeviceDiscovery.cudaAvailable(0)) {
      cancel("no CUDA device: " + DeviceDiscovery.probeCuda().detail())
    }
    new Feed(0, ids, slots, device = DeviceDiscovery.open(DeviceDiscovery.Choice.CUDA, 0))
  }

  private def withBridge[T](feed: Feed)(f: (BridgeServer, Path) => T): T = {
    val dir = Files.createTempDirectory("spindle-cuda-bridge-test")
    val server = try {
      BridgeServer.start(dir.resolve("bridge.sock"), 1,
        java.util.List.of(new RankFeed(0, feed.feeder, 0, "")),
        Admission.of(RunToken.random()))
    } catch {
      case e: Throwable => feed.close(); deleteRecursively(dir); throw e
    }
    try f(server, dir)
    finally try {
      server.close()
      feed.close()
      assert(feed.failure == null, s"producer failed: ${feed.failure}")
    } finally deleteRecursively(dir)
  }

  private lazy val hasCupy: Boolean =
    new ProcessBuilder(Python, "-c", "import cupy").start().waitFor() == 0

  private def assertArrived(t: Trainer, feed: Feed, numbers: Seq[Long], arrayType: String): Unit = {
    val got = t.batches()
    assert(got.map(_.batch) == numbers, t.output)
    for (l <- got) {
      val e = feed.expected.get(l.batch)
      assert(l.sha256 == e.sha256, s"image bytes of batch ${l.batch} differ from the Arrow batch")
      assert(l.labels == e.labels && l.indices == e.indices && l.keys == e.keys,
        s"batch ${l.batch}: $l vs $e")
      assert(l.shape == s"${Rows}x${ImageBytes}x1x1")
      assert(l.arrayType == arrayType && l.device == "cuda:0", s"batch ${l.batch}: $l")
      assert(l.view == "view", s"batch ${l.batch} is not a view of the feeder's slab: $l")
    }
  }

  test("every batch reaches a cuda:0 trainer in order with the Arrow batches' bytes; releases recycle slots") {
    val feed = cudaFeed(0L until 24L, slots = 3)
    withBridge(feed) { (server, dir) =>
      val t = new Trainer(server.socketPath(), 0, 1, dir, Seq("--device", "cuda:0"))
      assert(t.await() == 0, t.output)
      // 24 batches through 3 slots: the producer could only finish because releases freed slots.
      assertArrived(t, feed, 0L until 24L, "Tensor")
      val end = t.lines().last
      assert(end.kind == "END" && end.fields(2).contains("\"batchesConsumed\": [24]"), end)
      info(s"opened with ${end.fields(3)}")
      assert(server.stats().batchesDelivered == 24 && server.stats().leasesRevoked == 0)
    }
  }

  for (opener <- Seq("driver", "cupy")) {
    test(s"the $opener opener maps the same bytes into torch tensors") {
      val feed = cudaFeed(0L until 8L, slots = 2)
      withBridge(feed) { (server, dir) =>
        if (opener == "cupy" && !hasCupy) cancel(s"no cupy in $Python")
        val t = new Trainer(server.socketPath(), 0, 1, dir,
          Seq("--device", "cuda:0", "--ipc", opener))
        assert(t.await() == 0, t.output)
        assertArrived(t, feed, 0L until 8L, "Tensor")
        assert(t.lines().last.fields(3) == opener)
      }
    }
  }

  test("without torch, cupy arrays view the slab") {
    val feed = cudaFeed(0L until 6L, slots = 2)
    withBridge(feed) { (server, dir) =>
      if (!hasCupy) cancel(s"no cupy in $Python")
      val t = new Trainer(server.socketPath(), 0, 1, dir, Seq("--device", "cuda:0", "--numpy"))
      assert(t.await() == 0, t.output)
      assertArrived(t, feed, 0L until 6L, "ndarray")
    }
  }

  test("a killed trainer's batches go to the next trainer, which opens the handle anew") {
    val feed = cudaFeed(0L until 10L, slots = 3)
    withBridge(feed) { (server, dir) =>
      val state = dir.resolve("state.json")
      val first = new Trainer(server.socketPath(), 0, 1, dir,
        Seq("--device", "cuda:0", "--die-after", "4", "--state-out", state.toString))
      assert(first.await() == 137, "the first trainer should die by SIGKILL: " + first.output)
      val second = new Trainer(server.socketPath(), 0, 1, dir,
        Seq("--device", "cuda:0", "--state-in", state.toString))
      assert(second.await() == 0, second.output)
      assertArrived(first, feed, 0L until 4L, "Tensor")
      assertArrived(second, feed, 4L until 10L, "Tensor")
      // It held its current batch, and the one before if that one's fence had not completed yet.
      val revoked = server.stats().leasesRevoked
      assert(revoked == 1 || revoked == 2, s"$revoked leases revoked")
    }
  }

  test("a HELLO for another device is refused with the device to use; the right one is served") {
    val feed = cudaFeed(0L until 4L, slots = 2)
    withBridge(feed) { (server, dir) =>
      val s = server.socketPath()
      val wrong = new Trainer(s, 0, 1, dir, Seq("--device", "cuda:1", "--expect-error"))
      assert(wrong.await() == 0, wrong.output)
      val err = wrong.lines().head
      assert(err.kind == "ERROR" && err.fields(1) == "UNSUPPORTED_DEVICE", err)
      assert(err.fields(2).contains("Invalid device: 'cuda:1': rank 0's feeder runs on cuda:0"))
      assert(err.fields(2).contains("connect with device 'cuda:0'"))
      for (d <- Seq("cpu", "cuda", "cuda:7")) {
        val (code, msg) = refusal(s, frame(Wire.HELLO, helloTo(s, 0, 1, d)))
        assert(code == BridgeError.UNSUPPORTED_DEVICE.code, msg)
        assert(msg.startsWith(s"Invalid device: '$d'"), msg)
      }
      val good = new Trainer(s, 0, 1, dir, Seq("--device", "cuda:0"))
      assert(good.await() == 0, good.output)
      assertArrived(good, feed, 0L until 4L, "Tensor")
      assert(server.stats().refused == 4)
    }
  }

  test("WELCOME carries memory kind 2 with the feeder's export, BATCH offsets inside it") {
    val feed = cudaFeed(0L until 2L, slots = 2)
    withBridge(feed) { (server, _) =>
      val exported = feed.feeder.exportDeviceMemory().orElseThrow()
      val ch = SocketChannel.open(StandardProtocolFamily.UNIX)
      try {
        ch.connect(UnixDomainSocketAddress.of(server.socketPath()))
        ch.write(ByteBuffer.wrap(frame(Wire.HELLO,
          helloTo(server.socketPath(), 0, 1, "cuda:0"))))
        val w = Wire.read(ch)
        assert(w.`type` == Wire.WELCOME)
        val p = w.payload
        p.getInt(); p.getInt(); p.getLong()
        assert(p.get() == 2, "memory kind")
        assert(p.getInt() == 0, "ordinal")
        val h = new Array[Byte](64)
        p.get(h)
        // Two exports of one allocation need not be byte-identical: the trainers' tests prove
        // that the handle sent opens the slab; here it must be a real one of the right size.
        assert(h.exists(_ != 0) && p.getLong() == exported.size())
        ch.write(ByteBuffer.wrap(frame(Wire.NEXT, Wire.buffer(8).putLong(30000).flip())))
        val b = Wire.read(ch)
        assert(b.`type` == Wire.BATCH)
        val q = b.payload
        q.getLong(); q.getInt(); q.get()
        val ndim = q.get()
        (0 until ndim).foreach(_ => q.getLong())
        val (img, bytes, lab) = (q.getLong(), q.getLong(), q.getLong())
        assert(q.get() == 0, "event kind 0: the copy completed before the batch was leased")
        assert(img >= 0 && img + bytes <= exported.size(), s"images at $img, $bytes bytes")
        assert(lab >= 0 && lab + 8 * Rows <= exported.size(), s"labels at $lab")
        ch.write(ByteBuffer.wrap(frame(Wire.BYE, Wire.buffer(0))))
      } finally ch.close()
    }
  }
}
