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
}
