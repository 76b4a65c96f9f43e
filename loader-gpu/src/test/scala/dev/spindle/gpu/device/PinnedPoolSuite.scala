package dev.spindle.gpu.device

import org.scalatest.funsuite.AnyFunSuite

/** First-fit allocation with coalescing over the pool's slabs (host device). */
class PinnedPoolSuite extends AnyFunSuite {

  test("allocations are aligned, located, and coalesce back into one free range") {
    val pool = new PinnedPool(new HostDevice(), 4096 + 64)
    try {
      val a = pool.allocate(100)
      val b = pool.allocate(64)
      val c = pool.allocate(1000)
      assert(a % 64 == 0 && b == a + 128 && c == b + 64)
      assert(pool.usedBytes() == 128 + 64 + 1024)
      val loc = pool.locate(b, 64)
      assert(loc.offset() == b - loc.slab().address())
      assert(pool.locate(c, 5000) == null, "range past the slab end")
      assert(pool.locate(12345L, 1) == null)
      pool.free(b)
      pool.free(a)
      pool.free(c)
      assert(pool.usedBytes() == 0)
      assert(pool.allocate(4096) == a, "freed ranges coalesced into one")
      pool.free(a)
    } finally pool.close()
  }

  test("exhaustion and bad frees are reported with the sizes and the address") {
    val pool = new PinnedPool(new HostDevice(), 1024)
    try {
      val a = pool.allocate(1024 - 64)
      val e = intercept[IllegalStateException](pool.allocate(128))
      assert(e.getMessage.contains("need 128 bytes, 64 of 1024 free"))
      val f = intercept[IllegalArgumentException](pool.free(a + 64))
      assert(f.getMessage.contains("is not an allocation of this pool"))
      pool.free(a)
    } finally pool.close()
  }

  test("closing with live allocations fails loudly instead of freeing under them") {
    val pool = new PinnedPool(new HostDevice(), 1024)
    pool.allocate(10)
    val e = intercept[IllegalStateException](pool.close())
    assert(e.getMessage.contains("64 bytes in 1 buffer(s) still allocated"))
    pool.close()
  }
}
