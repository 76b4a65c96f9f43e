package dev.spindle.spark.shard

import java.io.ByteArrayInputStream

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import dev.spindle.spark.testkit.TarBlocks
import dev.spindle.spark.testkit.TestFiles.ascii

/**
 * Deterministic damaged tar shards for property tests: well-formed shards using every header kind
 * the reader knows (ustar, GNU long names, pax paths, directories, links, raw non-UTF-8 names,
 * repeated keys and extensions), then truncated, bit-flipped, or with header fields rewritten and
 * the checksum made valid again so the damage gets past the checksum.
 */
object TarMutations {
  /** A well-formed shard of 0 to 8 samples. */
  def shard(rnd: Random): Array[Byte] = {
    val parts = ArrayBuffer[Array[Byte]]()
    for (i <- 0 until rnd.nextInt(9)) {
      val key = keyOf(i, rnd)
      for (ext <- extensions(rnd)) {
        if (rnd.nextInt(8) == 0) parts += other(rnd)
        parts ++= named(key ++ ascii("." + ext), content(ext, rnd), rnd)
      }
    }
    parts += new Array[Byte](TarBlocks.Block * rnd.nextInt(3))
    parts.flatten.toArray
  }

  /** One to three of: a cut, flipped bits, a rewritten header field, a lost or repeated block. */
  def mutate(bytes: Array[Byte], rnd: Random): Array[Byte] =
    (0 until 1 + rnd.nextInt(3)).foldLeft(bytes)((b, _) => mutateOnce(b, rnd))

  /** A stream whose skip() goes past the end without saying so, as a FileInputStream's does. */
  final class OvershootingStream(bytes: Array[Byte]) extends ByteArrayInputStream(bytes) {
    override def skip(n: Long): Long = {
      pos = math.min(pos.toLong + n, Int.MaxValue.toLong).toInt
      n
    }
  }

  private def keyOf(i: Int, rnd: Random): Array[Byte] = rnd.nextInt(6) match {
    case 0 => ascii("d/" + "x" * (90 + rnd.nextInt(40)) + i) // needs a long name
    case 1 => ascii("k" + rnd.nextInt(i + 1)) // may repeat an earlier key
    case 2 => Array[Byte](0xff.toByte, (0xf0 + rnd.nextInt(16)).toByte) // not UTF-8
    case 3 => ascii(s"a.b$i") // a first dot inside what looks like the name
    case _ => ascii(f"s$i%03d")
  }

  private def extensions(rnd: Random): Seq[String] = {
    val all = Seq("jpg", "png", "cls", "json", "cls", "label", "txt")
    Seq("jpg", "cls").filter(_ => rnd.nextInt(6) != 0) ++ all.filter(_ => rnd.nextInt(8) == 0)
  }

  private def content(ext: String, rnd: Random): Array[Byte] = ext match {
    case "cls" | "label" =>
      if (rnd.nextInt(10) == 0) ascii("1" * 5000) else ascii(rnd.nextInt(20).toString)
    case _ => Array.fill(rnd.nextInt(1500))(rnd.nextInt(256).toByte)
  }

  /** The entry under a ustar name, a GNU long name or a pax path. */
  private def named(name: Array[Byte], data: Array[Byte], rnd: Random): Seq[Array[Byte]] =
    rnd.nextInt(4) match {
      case 0 => Seq(TarBlocks.longName(name), TarBlocks.entry(ascii("short"), data))
      case 1 => Seq(TarBlocks.pax("path" -> name), TarBlocks.entry(ascii("short"), data))
      case _ if name.length > 100 => Seq(TarBlocks.longName(name), TarBlocks.entry(name, data))
      case _ => Seq(TarBlocks.entry(name, data))
    }

  private def other(rnd: Random): Array[Byte] = rnd.nextInt(3) match {
    case 0 => TarBlocks.entry(ascii("dir/"), Array[Byte](), '5')
    case 1 => TarBlocks.entry(ascii("link.jpg"), Array[Byte](), '2')
    case _ =>
      val global = TarBlocks.pax("comment" -> ascii("global"))
      global(156) = 'g'.toByte
      TarBlocks.seal(global)
  }

  private def mutateOnce(b: Array[Byte], rnd: Random): Array[Byte] = {
    val blocks = math.max(1, b.length / TarBlocks.Block)
    val block = rnd.nextInt(blocks) * TarBlocks.Block
    rnd.nextInt(6) match {
      case 0 => b.take(rnd.nextInt(b.length + 1))
      case 1 => flip(b, rnd)
      case 2 if b.length >= block + TarBlocks.Block => field(b, block, rnd)
      case 3 => b.take(block) ++ b.drop(block + TarBlocks.Block)
      case 4 => b.take(block + TarBlocks.Block) ++ b.drop(block)
      case _ => b
    }
  }

  private def flip(b: Array[Byte], rnd: Random): Array[Byte] = {
    val c = b.clone()
    if (c.nonEmpty) for (_ <- 0 to rnd.nextInt(3)) {
      val i = rnd.nextInt(c.length)
      c(i) = (c(i) ^ (1 << rnd.nextInt(8))).toByte
    }
    c
  }

  /** Rewrites the size, type or name of the block at `at`, then makes its checksum valid. */
  private def field(b: Array[Byte], at: Int, rnd: Random): Array[Byte] = {
    val c = b.clone()
    val h = c.slice(at, at + TarBlocks.Block)
    rnd.nextInt(6) match {
      case 0 => TarBlocks.base256Size(h, -1L - rnd.nextInt(1 << 20))
      case 1 => TarBlocks.base256Size(h, 1L << (30 + rnd.nextInt(33)))
      case 2 => TarBlocks.rawSize(h, Seq("12x4", "-1", "   ", "77777777777", "0 1")(rnd.nextInt(5)))
      case 3 => h(156) = "0125xgLK7S\u0000"(rnd.nextInt(11)).toByte
      case 4 => h(rnd.nextInt(100)) = rnd.nextInt(256).toByte
      case _ => h(124 + rnd.nextInt(12)) = rnd.nextInt(256).toByte
    }
    TarBlocks.seal(h)
    System.arraycopy(h, 0, c, at, TarBlocks.Block)
    c
  }
}
