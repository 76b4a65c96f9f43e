package dev.spindle.spark.testkit

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.util.zip.CRC32

/** Hand-made broken images. */
object BadImages {
  /** A PNG whose header declares width×height but carries no pixel data. */
  def pngHeader(width: Int, height: Int): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    out.write(Array(0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A).map(_.toByte))
    val ihdr = ByteBuffer.allocate(13).putInt(width).putInt(height)
      .put(8.toByte).put(2.toByte).put(0.toByte).put(0.toByte).put(0.toByte).array()
    chunk(out, "IHDR", ihdr)
    chunk(out, "IEND", Array.emptyByteArray)
    out.toByteArray
  }

  private def chunk(out: ByteArrayOutputStream, kind: String, data: Array[Byte]): Unit = {
    out.write(ByteBuffer.allocate(4).putInt(data.length).array())
    val typeAndData = kind.getBytes("US-ASCII") ++ data
    out.write(typeAndData)
    val crc = new CRC32()
    crc.update(typeAndData)
    out.write(ByteBuffer.allocate(4).putInt(crc.getValue.toInt).array())
  }

  def garbage(n: Int): Array[Byte] = Array.tabulate(n)(i => (i * 31 + 7).toByte)

  /**
   * `jpeg` with its frame header (SOF0, SOF1 or SOF2) declaring `width` x `height`; nothing else
   * changes, so the entropy-coded data is that of the original size.
   */
  def jpegDeclaring(jpeg: Array[Byte], width: Int, height: Int): Array[Byte] = {
    val copy = jpeg.clone()
    def u8(p: Int) = copy(p) & 0xff
    var p = 2
    while (u8(p + 1) < 0xc0 || u8(p + 1) > 0xc2) p += 2 + (u8(p + 2) << 8 | u8(p + 3))
    copy(p + 5) = (height >> 8).toByte; copy(p + 6) = height.toByte
    copy(p + 7) = (width >> 8).toByte; copy(p + 8) = width.toByte
    copy
  }

  /** The first `fraction` of `jpeg` and an end-of-image marker: truncated, but ending as a JPEG. */
  def jpegCut(jpeg: Array[Byte], fraction: Double): Array[Byte] =
    jpeg.take((jpeg.length * fraction).toInt) ++ Array(0xff, 0xd9).map(_.toByte)

  /** `png` with its IHDR declaring `width` x `height` (CRC updated); image data unchanged. */
  def pngDeclaring(png: Array[Byte], width: Int, height: Int): Array[Byte] = {
    val copy = png.clone()
    ByteBuffer.wrap(copy, 16, 8).putInt(width).putInt(height)
    val crc = new CRC32()
    crc.update(copy, 12, 17)
    ByteBuffer.wrap(copy, 29, 4).putInt(crc.getValue.toInt)
    copy
  }
}
