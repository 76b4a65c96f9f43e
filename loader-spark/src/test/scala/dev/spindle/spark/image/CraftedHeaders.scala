package dev.spindle.spark.image

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.US_ASCII
import java.util.zip.CRC32

/** Hand-made headers that declare any size: decoding them would fail, probing must not. */
object CraftedHeaders {

  /** PNG signature + IHDR (RGB unless told) and nothing else. */
  def png(width: Long, height: Long, depth: Int = 8, colourType: Int = 2): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    out.write(Array[Int](0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n').map(_.toByte))
    val body = new ByteArrayOutputStream()
    val b = new DataOutputStream(body)
    b.writeBytes("IHDR")
    b.writeInt(width.toInt); b.writeInt(height.toInt)
    b.write(Array[Byte](depth.toByte, colourType.toByte, 0, 0, 0))
    out.writeInt(13)
    out.write(body.toByteArray)
    val crc = new CRC32(); crc.update(body.toByteArray)
    out.writeInt(crc.getValue.toInt)
    bytes.toByteArray
  }

  /** SOI + a baseline frame header (3 components) and nothing else. */
  def jpeg(width: Int, height: Int): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    out.write(Array(0xff, 0xd8, 0xff, 0xc0).map(_.toByte))
    out.writeShort(17); out.writeByte(8); out.writeShort(height); out.writeShort(width)
    out.writeByte(3)
    for (id <- 1 to 3) { out.writeByte(id); out.writeByte(0x11); out.writeByte(0) }
    bytes.toByteArray
  }

  private def littleEndian(n: Int): ByteBuffer = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN)

  /** BMP file header + BITMAPINFOHEADER, 24 bits a pixel, and no pixels. */
  def bmp(width: Int, height: Int): Array[Byte] = {
    val b = littleEndian(54)
    b.put("BM".getBytes(US_ASCII)).putInt(54).putInt(0).putInt(54)
    b.putInt(40).putInt(width).putInt(height).putShort(1).putShort(24).putInt(0).putInt(0)
    b.putInt(2835).putInt(2835).putInt(0).putInt(0)
    b.array()
  }

  /** A raw PPM header and no samples. */
  def pnm(width: Long, height: Long): Array[Byte] = s"P6\n$width $height\n255\n".getBytes(US_ASCII)

  /** A little-endian TIFF's first IFD: 8-bit RGB in one strip, whose bytes are not there. */
  def tiff(width: Long, height: Long): Array[Byte] = {
    val entries = Seq((256, 4, 1, width), (257, 4, 1, height), (258, 3, 3, 8L + 2 + 10 * 12 + 4),
      (259, 3, 1, 1L), (262, 3, 1, 2L), (273, 4, 1, 200L), (277, 3, 1, 3L), (278, 4, 1, height),
      (279, 4, 1, 3 * width * height), (284, 3, 1, 1L))
    val b = littleEndian(8 + 2 + entries.size * 12 + 4 + 6)
    b.put("II".getBytes(US_ASCII)).putShort(42).putInt(8).putShort(entries.size.toShort)
    for ((tag, kind, count, value) <- entries) {
      b.putShort(tag.toShort).putShort(kind.toShort).putInt(count)
      if (kind == 3 && count == 1) b.putShort(value.toShort).putShort(0) else b.putInt(value.toInt)
    }
    b.putInt(0).putShort(8).putShort(8).putShort(8)
    b.array()
  }

  /** A WebP's RIFF header and VP8X chunk declaring the canvas, and no image. */
  def webp(width: Int, height: Int): Array[Byte] = {
    val b = littleEndian(30)
    b.put("RIFF".getBytes(US_ASCII)).putInt(22).put("WEBPVP8X".getBytes(US_ASCII)).putInt(10)
    b.putInt(0)
    for (v <- Seq(width - 1, height - 1)) b.put(v.toByte).put((v >> 8).toByte).put((v >> 16).toByte)
    b.array()
  }

  /** A GIF's screen, a 2-colour table and an image descriptor covering it, and no image data. */
  def gif(width: Int, height: Int): Array[Byte] = {
    val b = littleEndian(30)
    b.put("GIF89a".getBytes(US_ASCII)).putShort(width.toShort).putShort(height.toShort)
    b.put(0x80.toByte).put(0.toByte).put(0.toByte).put(Array[Byte](0, 0, 0, -1, -1, -1))
    b.put(0x2c.toByte).putShort(0).putShort(0).putShort(width.toShort).putShort(height.toShort)
    b.put(0.toByte).put(2.toByte)
    b.array()
  }
}
