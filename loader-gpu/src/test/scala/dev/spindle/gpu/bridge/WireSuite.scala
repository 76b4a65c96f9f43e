package dev.spindle.gpu.bridge

import java.nio.channels.SocketChannel
import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

/** Framing rules that need no peer: what the server may put in a frame. */
class WireSuite extends AnyFunSuite {

  test("the server refuses to send a payload over the protocol's limit, naming size and limit") {
    val ch = SocketChannel.open(java.net.StandardProtocolFamily.UNIX)
    try {
      val e = intercept[IllegalStateException](Wire.write(ch, Wire.BATCH,
        Wire.buffer(Wire.MAX_PAYLOAD + 1)))
      assert(e.getMessage == "Invalid BATCH message: payload of 1048577 bytes (the protocol "
        + "allows at most 1048576)")
    } finally ch.close()
  }

  test("sample keys get 256 bytes each while the rows fit, less in very large batches") {
    assert(BatchKeys.limit(1) == 256 && BatchKeys.limit(3854) == 256)
    assert(BatchKeys.limit(3855) == 255)
    // 10,000 rows: (1,048,576 - 200 - 16 * 10,000) / 10,000 = 88 bytes a key.
    assert(BatchKeys.limit(10000) == 88)
    assert(BatchKeys.limit(BatchKeys.MAX_ROWS) == 15)
    for (rows <- Seq(1, 64, 4096, 20000, BatchKeys.MAX_ROWS)) {
      val worst = 200L + rows * (8L + 4L + 4L + BatchKeys.limit(rows))
      assert(worst <= Wire.MAX_PAYLOAD, s"$rows rows")
    }
    intercept[IllegalArgumentException](BatchKeys.limit(BatchKeys.MAX_ROWS + 1))
  }

  test("a field table takes its share of a BATCH frame: keys get less room, the frame still fits") {
    import dev.spindle.gpu.feed.{FeederConfig, SlotField}
    val fields = (0 until FeederConfig.MAX_FIELDS).map(i =>
      SlotField.fixed(f"f$i%03d" + "n" * (SlotField.MAX_NAME_BYTES - 4), SlotField.Dtype.INT64))
    val table = BatchFields.bytes(fields.asJava)
    assert(BatchFields.bytes(Seq.empty[SlotField].asJava) == 2) // the empty table: its count
    assert(table == 2 + 64 * (4 + 2 + 32 + 255))
    assert(BatchKeys.limit(1, 0) == BatchKeys.limit(1))
    assert(BatchKeys.limit(3854, table - 2) < BatchKeys.limit(3854))
    for (rows <- Seq(1, 64, 4096, 20000, BatchKeys.MAX_ROWS)) {
      val keys = BatchKeys.limit(rows, table - 2)
      assert(keys > 0, s"$rows rows")
      assert(200L + table + rows * (8L + 4L + 4L + keys) <= Wire.MAX_PAYLOAD, s"$rows rows")
    }
  }

  test("a key is cut at a character boundary, never inside a UTF-8 sequence") {
    def cut(s: String, n: Int) = new String(BatchKeys.cut(s, n), UTF_8)
    assert(cut("short", 256) == "short")
    assert(cut("abcdef", 3) == "abc")
    assert(cut("aé", 2) == "a") // é is 2 bytes: it does not fit in the 1 left
    assert(cut("a😀b", 4) == "a") // 4-byte sequence, 3 bytes left
    assert(cut("a😀b", 5) == "a😀")
    assert(cut("", 0) == "")
  }
}
