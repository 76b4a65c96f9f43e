package dev.spindle.spark.image

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.file.{Files, Paths}
import java.util.zip.{CRC32, Deflater}

import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * PNGs whose ancillary chunks are bombs: compressed text or colour profiles that inflate to a
 * gigabyte, and chunks that declare more bytes than the file has (docs/reliability.md).
 */
class PngChunkBombSuite extends AnyFunSuite {
  private val png = encode("png", 16, 16)((x, y) => (x * 16) << 16 | (y * 16) << 8 | 0x40)
  private val IhdrEnd = 8 + 25

  /** `png` with `chunks` inserted after its IHDR. */
  private def withChunks(chunks: Array[Byte]*): Array[Byte] =
    png.take(IhdrEnd) ++ chunks.flatten ++ png.drop(IhdrEnd)

  private def chunk(kind: String, data: Array[Byte], declared: Long = -1): Array[Byte] = {
    val typeAndData = kind.getBytes("US-ASCII") ++ data
    val crc = new CRC32()
    crc.update(typeAndData)
    val length = if (declared >= 0) declared else data.length.toLong
    ByteBuffer.allocate(4).putInt(length.toInt).array() ++ typeAndData ++
      ByteBuffer.allocate(4).putInt(crc.getValue.toInt).array()
  }

  /** A zlib stream of `bytes` zeros (1 GiB compresses to about 1 MB). */
  private def zeros(bytes: Long): Array[Byte] = {
    val d = new Deflater(9)
    val out = new ByteArrayOutputStream()
    val in = new Array[Byte](1 << 20)
    val buf = new Array[Byte](1 << 16)
    var left = bytes
    while (left > 0) {
      val n = math.min(left, in.length).toInt
      d.setInput(in, 0, n)
      left -= n
      while (!d.needsInput()) out.write(buf, 0, d.deflate(buf))
    }
    d.finish()
    while (!d.finished()) out.write(buf, 0, d.deflate(buf))
    d.end()
    out.toByteArray
  }

  private lazy val gigabyte = zeros(1L << 30)
  private def z(s: String) = s.getBytes("ISO-8859-1")

  private def rssKb(field: String): Long =
    Files.readAllLines(Paths.get("/proc/self/status")).toArray.map(_.toString)
      .find(_.startsWith(field + ":")).get.split("\\s+")(1).toLong

  /** Resets VmHWM to the current RSS (Linux 4.0+), so the peak measured is this decode's. */
  private def resetPeak(): Unit = Files.writeString(Paths.get("/proc/self/clear_refs"), "5")

  private val transform = ImageTransform.resizeCenterCrop(16)

  test("zTXt, iTXt and iCCP chunks inflating to 1 GiB decode as the image, in bounded memory") {
    val expected = applyTo(transform, png)
    val bombs = Seq(
      "zTXt" -> chunk("zTXt", z("Comment\u0000\u0000") ++ gigabyte),
      "iTXt" -> chunk("iTXt", z("Comment\u0000\u0001\u0000\u0000\u0000") ++ gigabyte),
      "iCCP" -> chunk("iCCP", z("bomb\u0000\u0000") ++ gigabyte))
    for ((kind, bomb) <- bombs) {
      resetPeak()
      val before = rssKb("VmRSS")
      val out = applyTo(transform, withChunks(bomb))
      val grewMb = (rssKb("VmHWM") - before) / 1024
      assert(out.sameElements(expected), s"$kind: ${firstDifference(out, expected)}")
      assert(grewMb < 256, s"$kind: peak RSS grew by $grewMb MB")
    }
  }

  test("a chunk declaring more bytes than the file holds is refused as corrupt") {
    val got = for (declared <- Seq(0x7fffffffL, 1L << 20)) yield {
      val lying = withChunks(chunk("zTXt", z("Comment\u0000\u0000") ++ zeros(100), declared))
      intercept[ImageException](applyTo(transform, lying)).getMessage
    }
    // refused from the chunk headers, before OpenCV would allocate the declared length
    assert(got == Seq(0x7fffffffL, 1L << 20).map(n => s"Corrupt PNG: chunk 'zTXt' at byte 33"
      + s" declares $n bytes but only 454 follow its header"))
  }
}
