package dev.spindle.spark.image

import java.io.{ByteArrayOutputStream, DataOutputStream}
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
}
