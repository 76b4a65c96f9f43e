package dev.spindle.gpu.ring

import java.util.concurrent.{TimeUnit, TimeoutException}

import org.scalatest.funsuite.AnyFunSuite

/** The slot state machine and the ring's bookkeeping, without any device. */
class PrefetchRingSuite extends AnyFunSuite {

  def ring(slots: Int, leaseMs: Long = 60000): PrefetchRing[Array[Int]] =
    new PrefetchRing[Array[Int]](slots, _ => new Array[Int](1), leaseMs, TimeUnit.MILLISECONDS)

  /** Fills, publishes, copies and leases one batch carrying `value`. */
  def cycle(r: PrefetchRing[Array[Int]], value: Int): Lease[Array[Int]] = {
    val s = r.claim(1, TimeUnit.SECONDS)
    s.payload()(0) = value
    r.publish(s)
    r.ready(r.takeStaged(1, TimeUnit.SECONDS))
    r.lease(1, TimeUnit.SECONDS)
  }

  test("only the documented transitions are allowed") {
    import SlotState._
    val allowed = Set(FREE -> FILLING, FILLING -> STAGED, FILLING -> FREE, STAGED -> COPYING,
      STAGED -> FREE, COPYING -> READY, COPYING -> FREE, READY -> LEASED, READY -> FREE,
      LEASED -> FREE)
    for (a <- SlotState.values; b <- SlotState.values) {
      assert(a.canMoveTo(b) == allowed.contains(a -> b), s"$a -> $b")
    }
  }

  test("a slot goes through every state in order and comes back FREE") {
    val r = ring(1)
    val s = r.claim(1, TimeUnit.SECONDS)
    assert(s.state() == SlotState.FILLING)
    r.publish(s)
    assert(s.state() == SlotState.STAGED && s.sequence() == 0)
    assert(r.takeStaged(1, TimeUnit.SECONDS) eq s)
    assert(s.state() == SlotState.COPYING)
    r.ready(s)
    assert(s.state() == SlotState.READY)
    val l = r.lease(1, TimeUnit.SECONDS)
    assert(l.slot() eq s)
    assert(s.state() == SlotState.LEASED)
    assert(r.release(l))
    assert(s.state() == SlotState.FREE)
  }

  test("protocol errors fail loudly instead of corrupting the ring") {
    val r = ring(2)
    val s = r.claim(1, TimeUnit.SECONDS)
    val e = intercept[IllegalStateException](r.ready(s))
    assert(e.getMessage.contains("illegal transition FILLING -> READY"))
    r.publish(s)
    intercept[IllegalStateException](r.publish(s))
    intercept[IllegalStateException](r.abandon(s))
  }

  test("a second or stale release does not free a later lease of the same slot") {
    val r = ring(1)
    val first = cycle(r, 1)
    assert(r.release(first))
    assert(!r.release(first))
    val second = cycle(r, 2)
    assert(second.slot() eq first.slot())
    assert(!r.release(first), "stale lease released the new one")
    assert(second.isCurrent)
    assert(r.release(second))
  }

  test("sequences follow publication order, not claim order") {
    val r = ring(2)
    val a = r.claim(1, TimeUnit.SECONDS)
    val b = r.claim(1, TimeUnit.SECONDS)
    r.publish(b)
    r.publish(a)
    assert(b.sequence() == 0 && a.sequence() == 1)
    assert(r.takeStaged(1, TimeUnit.SECONDS) eq b)
  }

  test("an abandoned fill returns its slot without a sequence gap") {
    val r = ring(1)
    r.abandon(r.claim(1, TimeUnit.SECONDS))
    val l = cycle(r, 5)
    assert(l.sequence() == 0)
    assert(l.slot().payload()(0) == 5)
    assert(r.snapshot().abandoned() == 1)
  }

  test("a consumer waiting at end of input gets null when the last fill is abandoned") {
    val r = ring(2)
    val filling = r.claim(1, TimeUnit.SECONDS)
    r.endOfInput()
    val result = new java.util.concurrent.atomic.AtomicReference[Any]("unset")
    val consumer = new Thread(() => result.set(r.lease(30, TimeUnit.SECONDS)))
    consumer.start()
    while (consumer.getState != Thread.State.TIMED_WAITING) Thread.sleep(1)
    val t0 = System.nanoTime()
    r.abandon(filling)
    consumer.join()
    assert(result.get == null)
    assert(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20), "woke only at its timeout")
  }

  test("claim times out when every slot is in use") {
    val r = ring(1)
    r.claim(1, TimeUnit.SECONDS)
    val e = intercept[TimeoutException](r.claim(50, TimeUnit.MILLISECONDS))
    assert(e.getMessage.contains("all 1 slots are in use"))
  }

  test("close discards staged and ready batches but leaves leases to the consumer") {
    val r = ring(3)
    val leased = cycle(r, 1)
    val ready = r.claim(1, TimeUnit.SECONDS)
    r.publish(ready)
    r.ready(r.takeStaged(1, TimeUnit.SECONDS))
    r.publish(r.claim(1, TimeUnit.SECONDS))
    r.close()
    val snap = r.snapshot()
    assert(snap.discarded() == 2)
    assert(snap.current(SlotState.LEASED) == 1)
    assert(r.takeStaged(10, TimeUnit.MILLISECONDS) == null)
    assert(r.revokeLeases() == 1)
    assert(!r.release(leased))
    r.close()
  }

  test("the time series of slot states is bounded and spans the run") {
    val r = ring(2)
    for (i <- 0 until 2000) {
      r.release(cycle(r, i))
      if (i % 100 == 0) Thread.sleep(11)
    }
    val snap = r.snapshot()
    assert(snap.seriesMillis().length <= 256)
    assert(snap.seriesMillis().length > 10)
    assert(snap.series().forall(_.sum == 2), "every sample accounts for every slot")
    assert(snap.mean(SlotState.FREE) > 0 && snap.mean(SlotState.FREE) <= 2)
  }
}
