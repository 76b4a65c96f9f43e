package dev.spindle.spark.testkit

import java.nio.charset.StandardCharsets.US_ASCII

/**
 * Tar archives built block by block, for what Spindle's TarWriter will not write: raw (non-UTF-8)
 * names, GNU long names, pax records, and header fields edited after the fact.
 */
object TarBlocks {
  val Block = 512

  /** A ustar header block for `name` (raw bytes, at most 100) declaring `size` bytes. */
  def header(name: Array[Byte], size: Long, typeflag: Char = '0'): Array[Byte] = {
    val h = new Array[Byte](Block)
    System.arraycopy(name, 0, h, 0, math.min(name.length, 100))
    octal(h, 100, 8, 420)
    octal(h, 108, 8, 0)
    octal(h, 116, 8, 0)
    octal(h, 124, 12, size)
    octal(h, 136, 12, 0)
    h(156) = typeflag.toByte
    "ustar\u000000".getBytes(US_ASCII).copyToArray(h, 257)
    seal(h)
  }

  /** Writes the checksum of the header at the start of `h` (after an edit); returns `h`. */
  def seal(h: Array[Byte]): Array[Byte] = {
    for (i <- 148 until 156) h(i) = ' '
    val sum = (0 until Block).map(h(_) & 0xff).sum
    octal(h, 148, 7, sum)
    h
  }

  /** Writes `value` into the size field in GNU base-256 (two's complement, 0x80/0xff lead). */
  def base256Size(h: Array[Byte], value: Long): Array[Byte] = {
    for (i <- 0 until 12) h(124 + 11 - i) = (if (i < 8) (value >> (8 * i)).toByte else (value >> 63).toByte)
    h(124) = if (value < 0) 0xff.toByte else 0x80.toByte
    seal(h)
  }

  /** Writes `text` (ASCII) into the size field as is, NUL-padded. */
  def rawSize(h: Array[Byte], text: String): Array[Byte] = {
    java.util.Arrays.fill(h, 124, 136, 0.toByte)
    text.getBytes(US_ASCII).copyToArray(h, 124)
    seal(h)
  }

  /** One entry: header, content, padding to the block. */
  def entry(name: Array[Byte], content: Array[Byte], typeflag: Char = '0'): Array[Byte] =
    header(name, content.length, typeflag) ++ content ++ new Array[Byte](pad(content.length))

  def file(name: String, content: Array[Byte]): Array[Byte] = entry(name.getBytes("UTF-8"), content)

  /** A GNU long-name entry: the next header's name is `name`. */
  def longName(name: Array[Byte]): Array[Byte] =
    entry("././@LongLink".getBytes(US_ASCII), name :+ 0.toByte, 'L')

  /** A pax extended header with the given records (`path`, `size`, …). */
  def pax(records: (String, Array[Byte])*): Array[Byte] =
    entry("PaxHeaders/x".getBytes(US_ASCII), records.flatMap { case (k, v) => paxRecord(k, v) }.toArray, 'x')

  /** The archive of `parts`, with its two end-of-archive blocks. */
  def tar(parts: Array[Byte]*): Array[Byte] = parts.flatten.toArray ++ new Array[Byte](2 * Block)

  private def paxRecord(key: String, value: Array[Byte]): Array[Byte] = {
    val rest = key.length + value.length + 3 // ' ', '=', '\n'
    var len = rest + 1
    while (len.toString.length + rest != len) len += 1
    s"$len $key=".getBytes(US_ASCII) ++ value ++ Array('\n'.toByte)
  }

  private def pad(n: Int): Int = (Block - n % Block) % Block

  private def octal(h: Array[Byte], offset: Int, length: Int, value: Long): Unit = {
    val digits = java.lang.Long.toOctalString(value)
    val padded = "0" * (length - 1 - digits.length) + digits
    padded.getBytes(US_ASCII).copyToArray(h, offset)
    h(offset + length - 1) = 0
  }
}
