package dev.spindle.gpu.feed

import java.nio.{ByteBuffer, ByteOrder}
import java.time.Duration
import java.util.concurrent.{CountDownLatch, TimeUnit, TimeoutException}
import java.util.concurrent.atomic.AtomicReference

import dev.spindle.gpu.device.{Device, DeviceKind, ElementType, Half, NormalizeSpec}
import dev.spindle.gpu.feed.TestBatches._
import dev.spindle.gpu.ring.{LeaseExpiredException, RingFailedException, SlotState}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.memory.util.MemoryUtil
import org.scalatest.funsuite.AnyFunSuite

/**
 * The ring contract every device must honour, run against a fresh feeder per test. Subclasses
 * say how to open the device; a device that is absent cancels each test with the reason.
 */
abstract class FeederContract extends AnyFunSuite {

  /** Opens the device under test, or cancels the test. The feeder takes ownership. */
  def openDevice(): Device

  val H = 4
  val W = 6
  val C = 3
  val ImageBytes: Int = H * W * C
  val MaxRows = 5
  val Long10s: Duration = Duration.ofSeconds(10)
  val Short: Duration = Duration.ofMillis(150)

  def config(slots: Int, spec: NormalizeSpec = NormalizeSpec.raw(H, W, C)): FeederConfig =
    FeederConfig.of(MaxRows, spec).withSlots(slots).withCloseGrace(Duration.ofMillis(200))

  def withFeeder[T](cfg: FeederConfig)(f: (GpuFeeder, BufferAllocator) => T): T =
    withAllocator { alloc =>
      val feeder = GpuFeeder.open(openDevice(), cfg)
      try f(feeder, alloc)
      finally feeder.close()
    }

  def offer(feeder: GpuFeeder, alloc: BufferAllocator, batch: Long, rows: Int = MaxRows,
      timeout: Duration = Long10s, tensor: Boolean = false): Unit = {
    val root = build(alloc, batch, rows, ImageBytes, tensor = tensor)
    try feeder.offer(root, timeout)
    finally root.close()
  }

  def imageBytes(b: DeviceBatch): Array[Byte] = {
    val buf = ByteBuffer.allocateDirect(b.imageBytes.toInt)
    b.copyImageTo(buf)
    val out = new Array[Byte](buf.capacity)
    buf.get(out)
    out
  }

  def assertBatch(b: DeviceBatch, batch: Long, rows: Int): Unit = {
    assert(b.rows == rows)
    val bytes = imageBytes(b)
    for (r <- 0 until rows; i <- 0 until ImageBytes) {
      assert(bytes(r * ImageBytes + i) == pixel(batch, r, i), s"batch $batch row $r byte $i")
    }
    val labels = ByteBuffer.allocateDirect(8 * rows).order(ByteOrder.LITTLE_ENDIAN)
    b.copyLabelsTo(labels)
    for (r <- 0 until rows) {
      assert(b.label(r) == label(batch, r))
      assert(labels.getLong(8 * r) == label(batch, r), "label in device memory")
      assert(b.key(r) == key(batch, r))
      assert(b.index(r) == index(batch, r))
    }
  }

  /**
   * Batch `batch` written into a claimed slot row by row, as decode threads do: pixels at each
   * row's address, then each row's label, key, index and weight (rows in `unweighted` get 0),
   * rows in reverse order to show the order does not matter. Returns the open writer.
   */
  def writeSlot(feeder: GpuFeeder, batch: Long, rows: Int = MaxRows,
      unweighted: Set[Int] = Set.empty): SlotWriter = {
    val w = feeder.claimSlot(Long10s)
    assert(w.rowBytes == ImageBytes && w.capacity == MaxRows)
    for (r <- (0 until rows).reverse) {
      val at = w.rowAddress(r)
      for (i <- 0 until ImageBytes) MemoryUtil.putByte(at + i, pixel(batch, r, i))
      w.setRow(r, label(batch, r), key(batch, r), index(batch, r), !unweighted(r))
    }
    w
  }

  test("batches are leased in the order they were offered, with their exact bytes on the device") {
    withFeeder(config(3)) { (feeder, alloc) =>
      val producer = new Thread(() => (0 until 12).foreach(n => offer(feeder, alloc, n, 1 + n % MaxRows)))
      producer.start()
      for (n <- 0 until 12) {
        val b = feeder.next(Long10s)
        try {
          assert(b.sequence == n)
          assert(b.shape.toSeq == Seq(1L + n % MaxRows, H, W, C))
          assert(b.dtype == ElementType.UINT8)
          assertBatch(b, n, 1 + n % MaxRows)
        } finally b.close()
      }
      producer.join()
    }
  }

  test("an image column stored as the arrow.fixed_shape_tensor extension type is accepted") {
    withFeeder(config(2)) { (feeder, alloc) =>
      offer(feeder, alloc, 7, tensor = true)
      val b = feeder.next(Long10s)
      try assertBatch(b, 7, MaxRows) finally b.close()
    }
  }

  for (dtype <- Seq(ElementType.FLOAT32, ElementType.FLOAT16)) {
    test(s"normalisation to $dtype CHW matches the CPU reference bit for bit") {
      val spec = NormalizeSpec.imagenet(dtype, H, W)
      withFeeder(config(2, spec)) { (feeder, alloc) =>
        offer(feeder, alloc, 3)
        val b = feeder.next(Long10s)
        try {
          assert(b.shape.toSeq == Seq(MaxRows.toLong, C, H, W))
          val out = ByteBuffer.wrap(imageBytes(b)).order(ByteOrder.LITTLE_ENDIAN)
          val table = spec.table()
          for (r <- 0 until MaxRows; c <- 0 until C; p <- 0 until H * W) {
            val x = (pixel(3, r, p * C + c) & 0xff).toFloat
            val expected = Math.fma(x, table(c), table(C + c))
            val at = ((r * C + c) * H * W + p) * dtype.bytes
            val actual =
              if (dtype == ElementType.FLOAT32) out.getFloat(at) else Half.toFloat(out.getShort(at))
            val reference =
              if (dtype == ElementType.FLOAT32) expected else Half.toFloat(Half.fromFloat(expected))
            assert(actual == reference, s"row $r channel $c pixel $p")
            val plain = (x / 255f - spec.mean()(c)) / spec.std()(c)
            assert(math.abs(actual - plain) <= (if (dtype == ElementType.FLOAT32) 1e-5 else 4e-3))
          }
        } finally b.close()
      }
    }
  }

  test("a slot is not refilled before its consumer releases it") {
    withFeeder(config(2)) { (feeder, alloc) =>
      offer(feeder, alloc, 0)
      offer(feeder, alloc, 1)
      val first = feeder.next(Long10s)
      val second = feeder.next(Long10s)
      intercept[TimeoutException](offer(feeder, alloc, 2, timeout = Short))
      assertBatch(first, 0, MaxRows)
      assertBatch(second, 1, MaxRows)
      first.close()
      offer(feeder, alloc, 2)
      assertBatch(second, 1, MaxRows)
      second.close()
      val third = feeder.next(Long10s)
      try assertBatch(third, 2, MaxRows) finally third.close()
    }
  }

  test("producers block when the ring is full, so memory stays bounded by the slot count") {
    val slots = 3
    withFeeder(config(slots)) { (feeder, alloc) =>
      val producer = new Thread(() => (0 until 10).foreach(n => offer(feeder, alloc, n)))
      producer.start()
      eventually(feeder.stats().ring().published() == slots)
      Thread.sleep(300)
      assert(feeder.stats().ring().published() == slots, "a producer ran past a full ring")
      assert(producer.isAlive, "the producer should be blocked")
      for (n <- 0 until 10) {
        val b = feeder.next(Long10s)
        try assert(b.index(0) == index(n, 0)) finally b.close()
      }
      producer.join()
      val ring = feeder.stats().ring()
      val peakInUse = SlotState.values.filter(_ != SlotState.FREE).map(ring.peak).max
      assert(peakInUse <= slots)
      assert(ring.producerBlockedNanos() > 0)
    }
  }

  test("next times out with a message when no batch arrives") {
    withFeeder(config(2)) { (feeder, _) =>
      val e = intercept[TimeoutException](feeder.next(Short))
      assert(e.getMessage.contains("No batch ready within"))
    }
  }

  test("after end of input the consumer drains the ring and then gets null") {
    withFeeder(config(3)) { (feeder, alloc) =>
      offer(feeder, alloc, 0)
      offer(feeder, alloc, 1)
      feeder.endOfInput()
      intercept[IllegalStateException](offer(feeder, alloc, 2))
      for (n <- 0 until 2) {
        val b = feeder.next(Long10s)
        try assert(b.sequence == n) finally b.close()
      }
      assert(feeder.next(Long10s) == null)
    }
  }

  test("closing with a lease outstanding revokes it after the grace period") {
    withAllocator { alloc =>
      val feeder = GpuFeeder.open(openDevice(), config(2))
      offer(feeder, alloc, 0)
      val b = feeder.next(Long10s)
      val t0 = System.nanoTime()
      feeder.close(Duration.ofMillis(100))
      assert(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(100))
      assert(!b.isValid)
      val e = intercept[IllegalStateException](b.imagePointer())
      assert(e.getMessage.contains("no longer leased"))
      b.close()
      b.close()
      assert(feeder.stats().leasesRevokedAtClose() == 1)
      intercept[IllegalStateException](offer(feeder, alloc, 1))
      feeder.close()
    }
  }

  test("close waits for a lease released during the grace period") {
    withAllocator { alloc =>
      val feeder = GpuFeeder.open(openDevice(), config(2))
      offer(feeder, alloc, 0)
      val b = feeder.next(Long10s)
      val releaser = new Thread(() => { Thread.sleep(200); b.close() })
      releaser.start()
      feeder.close(Long10s)
      releaser.join()
      assert(feeder.stats().leasesRevokedAtClose() == 0)
      assert(feeder.stats().ring().released() == 1)
    }
  }

  test("close wakes a consumer and a producer that are waiting") {
    withAllocator { alloc =>
      val feeder = GpuFeeder.open(openDevice(), config(2))
      offer(feeder, alloc, 0)
      offer(feeder, alloc, 1)
      val errors = new AtomicReference[Throwable]()
      val producer = new Thread(() =>
        try offer(feeder, alloc, 2) catch { case t: Throwable => errors.set(t) })
      producer.start()
      eventually(producer.getState == Thread.State.TIMED_WAITING)
      feeder.close()
      producer.join(10000)
      assert(!producer.isAlive)
      assert(errors.get.isInstanceOf[IllegalStateException])
      intercept[IllegalStateException](feeder.next(Long10s))
    }
  }

  test("a filler that fails returns its slot and the ring keeps working") {
    withFeeder(config(2)) { (feeder, alloc) =>
      val wrongSize = build(alloc, 0, 2, ImageBytes + 1)
      try {
        val e = intercept[IllegalArgumentException](feeder.offer(wrongSize, Long10s))
        assert(e.getMessage.contains("image size " + (ImageBytes + 1)))
      } finally wrongSize.close()
      val nullLabel = build(alloc, 0, 2, ImageBytes)
      try {
        nullLabel.getVector("label").setNull(1)
        val e = intercept[IllegalArgumentException](feeder.offer(nullLabel, Long10s))
        assert(e.getMessage.contains("'label' is null at row 1"))
        assert(e.getMessage.contains(key(0, 1)))
      } finally nullLabel.close()
      val tooMany = build(alloc, 0, MaxRows + 1, ImageBytes)
      try intercept[IllegalArgumentException](feeder.offer(tooMany, Long10s))
      finally tooMany.close()
      assert(feeder.stats().ring().abandoned() == 3)
      offer(feeder, alloc, 10)
      offer(feeder, alloc, 11)
      for (n <- 10 until 12) {
        val b = feeder.next(Long10s)
        try assertBatch(b, n, MaxRows) finally b.close()
      }
    }
  }

  test("a failure on the producing side reaches the consumer on its next call") {
    withFeeder(config(2)) { (feeder, alloc) =>
      offer(feeder, alloc, 0)
      feeder.fail(new RuntimeException("feed task 3 failed: corrupt shard"))
      val e = intercept[RingFailedException](feeder.next(Long10s))
      assert(e.getCause.getMessage.contains("corrupt shard"))
      intercept[RingFailedException](offer(feeder, alloc, 1))
    }
  }

  test("a consumer that dies holding a lease fails the feeder after the deadline, not forever") {
    val cfg = config(2).withLeaseTimeout(Duration.ofMillis(300))
    withFeeder(cfg) { (feeder, alloc) =>
      offer(feeder, alloc, 0)
      offer(feeder, alloc, 1)
      feeder.next(Long10s).close()
      offer(feeder, alloc, 2) // the ring is now full: batch 1 and batch 2 hold both slots
      val leased = new CountDownLatch(1)
      val consumer = new Thread(() => { feeder.next(Long10s); leased.countDown() }, "dying-trainer")
      consumer.start()
      leased.await()
      consumer.join()
      val t0 = System.nanoTime()
      val e = intercept[RingFailedException](offer(feeder, alloc, 3, timeout = Duration.ofSeconds(30)))
      assert(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(25))
      assert(e.getCause.isInstanceOf[LeaseExpiredException])
      assert(e.getCause.getMessage.contains("'dying-trainer'"))
      assert(feeder.stats().ring().expired() == 1)
      intercept[RingFailedException](feeder.next(Long10s))
    }
  }

  test("statistics count batches, H2D bytes and slot states") {
    withFeeder(config(3)) { (feeder, alloc) =>
      for (n <- 0 until 4) {
        offer(feeder, alloc, n)
        val b = feeder.next(Long10s)
        b.close()
      }
      val s = feeder.stats()
      assert(s.batchesCopied == 4)
      assert(s.h2dBytes == 4L * (MaxRows * ImageBytes + 8 * MaxRows))
      assert(s.ring().leased() == 4 && s.ring().released() == 4 && s.ring().published() == 4)
      assert(s.ring().current(SlotState.FREE) == 3)
      assert(s.ring().peak(SlotState.LEASED) == 1)
      assert(s.ring().seriesMillis().length > 0)
      val json = s.toJson
      for (k <- Seq("\"h2d_gbps\":", "\"consumer_wait_ms_per_batch\":", "\"producer_blocked_ms\":",
          "\"LEASED\":", "\"series\":[[")) assert(json.contains(k), k)
    }
  }

  test("batches built in the feeder's pinned pool are copied in place, others are staged") {
    withFeeder(config(3).withPinnedPool(1 << 20)) { (feeder, plain) =>
      val pinned = feeder.newPinnedAllocator(1 << 20)
      try {
        for (n <- 0 until 4) {
          val root = build(pinned, n, MaxRows, ImageBytes)
          feeder.offer(root, Long10s)
          root.close() // the feeder holds the image buffer until the device has read it
          val b = feeder.next(Long10s)
          try assertBatch(b, n, MaxRows) finally b.close()
        }
        offer(feeder, plain, 9)
        val b = feeder.next(Long10s)
        try assertBatch(b, 9, MaxRows) finally b.close()
        val s = feeder.stats()
        assert(s.zeroCopyBatches == 4)
        assert(s.batchesCopied == 5)
        assert(pinned.getAllocatedMemory == 0, "zero-copy buffers returned after their copy")
      } finally pinned.close()
    }
  }

  test("a slot written row by row is leased with its rows' bytes, labels, keys, indices and weights") {
    withFeeder(config(3)) { (feeder, _) =>
      for (n <- 0 until 5) {
        val w = writeSlot(feeder, n, 1 + n % MaxRows, unweighted = Set(0))
        w.publish(1 + n % MaxRows)
        w.close() // after publishing: nothing
        val b = feeder.next(Long10s)
        try {
          assert(b.sequence == n)
          assertBatch(b, n, 1 + n % MaxRows)
          assert(b.weight(0) == 0f)
          for (r <- 1 until b.rows) assert(b.weight(r) == 1f)
        } finally b.close()
      }
      val s = feeder.stats()
      assert(s.zeroCopyBatches == 5 && s.batchesCopied == 5)
      assert(s.hostCopyBytes == 0, "a written slot is not staged")
      val bytes = (0 until 5).map(n => (1 + n % MaxRows) * (ImageBytes + 8L)).sum
      assert(s.h2dBytes == bytes, "every row reached the device's memory")
      if (feeder.device().kind() == DeviceKind.HOST) {
        assert(s.inPlaceBytes == bytes, "on a host device the rows are already where the trainer reads")
      } else {
        assert(s.inPlaceBytes == 0, "on CUDA the copy engine reads the pinned slot")
      }
    }
  }

  test("written slots are leased in publication order, whatever order they were claimed in") {
    withFeeder(config(4)) { (feeder, _) =>
      val first = writeSlot(feeder, 10)
      val second = writeSlot(feeder, 11)
      val third = writeSlot(feeder, 12)
      second.publish(MaxRows)
      third.publish(MaxRows)
      first.publish(MaxRows)
      for ((batch, seq) <- Seq(11L, 12L, 10L).zipWithIndex) {
        val b = feeder.next(Long10s)
        try {
          assert(b.sequence == seq)
          assertBatch(b, batch, MaxRows)
        } finally b.close()
      }
    }
  }

  test("a written slot closed without publishing goes back to the ring, which keeps working") {
    withFeeder(config(2)) { (feeder, alloc) =>
      val abandoned = writeSlot(feeder, 1)
      abandoned.close()
      abandoned.close()
      intercept[IllegalStateException](abandoned.rowAddress(0))
      intercept[IllegalStateException](abandoned.publish(MaxRows))
      val unset = feeder.claimSlot(Long10s)
      unset.setRow(0, 1, "k", 0, true)
      val e = intercept[IllegalStateException](unset.publish(2))
      assert(e.getMessage.contains("Row 1 of 2 was not set"))
      intercept[IllegalArgumentException](unset.publish(MaxRows + 1))
      intercept[IndexOutOfBoundsException](unset.rowAddress(MaxRows))
      unset.close()
      assert(feeder.stats().ring().abandoned() == 2)
      offer(feeder, alloc, 2)
      val w = writeSlot(feeder, 3)
      w.publish(MaxRows)
      intercept[IllegalStateException](w.setRow(0, 1, "k", 0, true))
      for (n <- 2 to 3) {
        val b = feeder.next(Long10s)
        try assertBatch(b, n, MaxRows) finally b.close()
      }
      assert(feeder.stats().ring().published() == 2)
      assert(feeder.stats().hostCopyBytes == MaxRows * ImageBytes, "the offered batch was staged")
    }
  }

  test("claiming a slot blocks while the ring is full, and times out naming it") {
    withFeeder(config(2)) { (feeder, _) =>
      val a = writeSlot(feeder, 0)
      val b = writeSlot(feeder, 1)
      val e = intercept[TimeoutException](feeder.claimSlot(Short))
      assert(e.getMessage.contains("No free ring slot"))
      a.publish(MaxRows)
      b.close()
      val lease = feeder.next(Long10s)
      val c = feeder.claimSlot(Long10s) // b's slot came back
      c.close()
      lease.close()
    }
  }

  for (dtype <- Seq(ElementType.FLOAT32, ElementType.FLOAT16)) {
    test(s"a written slot is normalised to $dtype exactly as the same batch offered") {
      val spec = NormalizeSpec.imagenet(dtype, H, W)
      withFeeder(config(2, spec)) { (feeder, alloc) =>
        offer(feeder, alloc, 5)
        val offered = feeder.next(Long10s)
        val expected = try imageBytes(offered) finally offered.close()
        val w = writeSlot(feeder, 5)
        w.publish(MaxRows)
        val written = feeder.next(Long10s)
        try assert(imageBytes(written).sameElements(expected)) finally written.close()
      }
    }
  }

  test("a pinned allocator is refused without a pinned pool") {
    withFeeder(config(2)) { (feeder, _) =>
      val e = intercept[IllegalStateException](feeder.newPinnedAllocator(1024))
      assert(e.getMessage.contains("no pinned pool"))
    }
  }

  test("closing twice is harmless") {
    val feeder = GpuFeeder.open(openDevice(), config(2))
    feeder.close()
    feeder.close()
    assert(feeder.isClosed)
  }

  def eventually(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20)
    while (!cond) {
      assert(System.nanoTime() < deadline, "condition not reached in 20 s")
      Thread.sleep(5)
    }
  }
}
