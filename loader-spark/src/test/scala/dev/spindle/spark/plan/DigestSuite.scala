package dev.spindle.spark.plan

import java.nio.ByteBuffer
import java.security.MessageDigest
import java.util.HexFormat

import org.scalatest.funsuite.AnyFunSuite

class DigestSuite extends AnyFunSuite {
  private def reference(xs: Array[Long]): String = {
    val b = ByteBuffer.allocate(8 * xs.length)
    xs.foreach(b.putLong)
    HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b.array()))
  }

  test("the digest is SHA-256 of the indices as big-endian 8-byte words") {
    val xs = Array.tabulate(5000)(i => (i * 7919L) % 5003 - 17)
    assert(Digest.of(xs) == reference(xs))
    assert(Digest.of(Array.emptyLongArray) == reference(Array.emptyLongArray))
  }

  test("the digest depends on order") {
    assert(Digest.of(Array(1L, 2L, 3L)) != Digest.of(Array(1L, 3L, 2L)))
  }

  test("feeding the sequence in pieces gives the digest of the whole") {
    val xs = Array.tabulate(3000)(_.toLong * 3)
    val d = new Digest()
    d.update(xs, 0, 1000).update(xs, 1000, 1).update(xs, 1001, 1999)
    assert(d.count() == 3000)
    assert(d.hex() == Digest.of(xs))
    assert(Digest.of(xs, 1000, 500) == reference(xs.slice(1000, 1500)))
  }

  test("a finished digest refuses more input, and bad ranges are refused") {
    val d = new Digest().update(1L)
    d.hex()
    intercept[IllegalStateException](d.update(2L))
    intercept[IllegalStateException](d.hex())
    intercept[IndexOutOfBoundsException](new Digest().update(Array(1L, 2L), 1, 2))
  }
}
