package dev.spindle.gpu.feed

import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicReference

import dev.spindle.gpu.device.{HostDevice, NormalizeSpec}
import dev.spindle.gpu.feed.TestBatches._
import org.scalatest.funsuite.AnyFunSuite

import scala.util.Random

/**
 * Randomised stress on the host device: several producers and consumers, random slot counts,
 * batch sizes and hold times. Every batch must arrive exactly once, intact, with each producer's
 * batches in its own order, and nothing may leak.
 */
class RingStressSuite extends AnyFunSuite {
  val ImageBytes = 48

  for (round <- 0 until 3) {
    test(s"every batch arrives exactly once and intact under random load (round $round)") {
      val seed = System.nanoTime() ^ round
      val rnd = new Random(seed)
      val slots = 2 + rnd.nextInt(4)
      val producers = 1 + rnd.nextInt(3)
      val consumers = 1 + rnd.nextInt(3)
      val perProducer = 40 + rnd.nextInt(40)
      info(s"seed=$seed slots=$slots producers=$producers consumers=$consumers batches=$perProducer")
      val cfg = FeederConfig.of(4, NormalizeSpec.raw(4, 4, 3)).withSlots(slots)
      val seen = new ConcurrentHashMap[Long, java.lang.Long]()
      val error = new AtomicReference[Throwable]()
      withAllocator { alloc =>
        val feeder = GpuFeeder.open(new HostDevice(), cfg)
        try {
          val ps = (0 until producers).map { p =>
            val r = new Random(seed + p)
            thread(error) {
              for (n <- 0 until perProducer) {
                val batch = p * 1000L + n
                val root = build(alloc, batch, 1 + (batch % 4).toInt, ImageBytes)
                try feeder.offer(root, Duration.ofSeconds(30)) finally root.close()
                if (r.nextInt(4) == 0) Thread.sleep(r.nextInt(2))
              }
            }
          }
          val cs = (0 until consumers).map { c =>
            val r = new Random(seed * 31 + c)
            thread(error) {
              var b = feeder.next(Duration.ofSeconds(30))
              while (b != null) {
                try {
                  val batch = b.index(0) / 100000
                  check(b, batch)
                  assert(seen.put(batch, b.sequence) == null, s"batch $batch delivered twice")
                  if (r.nextInt(3) == 0) Thread.sleep(r.nextInt(3))
                } finally b.close()
                b = feeder.next(Duration.ofSeconds(30))
              }
            }
          }
          ps.foreach(_.join())
          feeder.endOfInput()
          cs.foreach(_.join())
          if (error.get != null) throw error.get
          assert(seen.size == producers * perProducer)
          for (p <- 0 until producers; n <- 1 until perProducer) {
            assert(seen.get(p * 1000L + n) > seen.get(p * 1000L + n - 1), s"producer $p order")
          }
          val s = feeder.stats()
          assert(s.ring().leased() == s.ring().released())
          assert(s.batchesCopied == producers * perProducer)
        } finally feeder.close()
      }
    }
  }

  def check(b: DeviceBatch, batch: Long): Unit = {
    val rows = 1 + (batch % 4).toInt
    assert(b.rows == rows)
    val buf = java.nio.ByteBuffer.allocateDirect(b.imageBytes.toInt)
    b.copyImageTo(buf)
    for (r <- 0 until rows; i <- 0 until ImageBytes) {
      assert(buf.get(r * ImageBytes + i) == pixel(batch, r, i), s"batch $batch row $r byte $i")
    }
    for (r <- 0 until rows) {
      assert(b.label(r) == label(batch, r) && b.key(r) == key(batch, r))
    }
  }

  def thread(error: AtomicReference[Throwable])(body: => Unit): Thread = {
    val t = new Thread(() => try body catch { case e: Throwable => error.compareAndSet(null, e) })
    t.start()
    t
  }
}
