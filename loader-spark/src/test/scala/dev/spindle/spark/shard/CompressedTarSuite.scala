package dev.spindle.spark.shard

import java.io.{ByteArrayOutputStream, OutputStream}
import java.nio.file.{Files, Path}
import java.util.zip.CRC32

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream
import org.apache.commons.compress.compressors.xz.XZCompressorOutputStream
import org.apache.commons.compress.compressors.zstandard.ZstdCompressorOutputStream
import org.apache.hadoop.conf.Configuration
import org.scalatest.concurrent.TimeLimits
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.SpanSugar._
import dev.spindle.spark.manifest.ShardCatalog

/**
 * xz, bzip2 and Zstandard tar shards read like `.tar` (as GzipTarSuite shows for gzip); a damaged
 * stream is the shard's damage, named with its codec, never a crash, a hang or a task failure.
 */
class CompressedTarSuite extends AnyFunSuite with TimeLimits {
  private val conf = new Configuration()
  private val limits = new SampleLimits(1 << 20, 0)

  /** A codec: its name in messages, the suffixes of its shards, and its writer. */
  private case class Codec(name: String, suffixes: Seq[String], writer: OutputStream => OutputStream) {
    def compress(bytes: Array[Byte]): Array[Byte] = {
      val out = new ByteArrayOutputStream()
      val c = writer(out)
      c.write(bytes)
      c.close()
      out.toByteArray
    }
  }

  private val codecs = Seq(
    Codec("xz", Seq(".tar.xz", ".txz"), new XZCompressorOutputStream(_)),
    Codec("bzip2", Seq(".tar.bz2", ".tbz2", ".tbz"), new BZip2CompressorOutputStream(_, 1)), // bzip2 -1
    // with a content checksum, as the zstd command writes by default
    Codec("zstd", Seq(".tar.zst", ".tzst"), new ZstdCompressorOutputStream(_, 3, false, true)))

  /** `n` samples with incompressible-ish images, so a cut lands inside the archive. */
  private def samples(n: Int): Array[Byte] = TestFiles.tarBytes((0 until n).flatMap { i =>
    val image = Array.tabulate[Byte](3000)(j => ((j * j * 31 + i * 7 + (j >> 7) * i) >> 3).toByte)
    Seq(f"k$i%03d.jpg" -> image, f"k$i%03d.cls" -> ascii((i % 5).toString))
  })

  private val tar = samples(20)

  private def read(file: Path, positions: Array[Int] = null): Seq[Sample] = failAfter(30.seconds) {
    val m = new ShardCatalog(conf, 1000).list(file.toString, ShardCatalog.Counter.onThisThread(conf))
    val shard = m.shards.get(0)
    val r = if (positions == null) ShardReader.open(shard, conf, limits) else ShardReader.open(shard, conf, limits, positions)
    val samples = try r.asScala.toSeq finally r.close()
    if (positions == null) assert(shard.samples == samples.size, "counting and reading agree")
    samples
  }

  private def view(s: Seq[Sample]) = s.map(x => (x.key, x.position, x.label, x.image.toSeq, x.problem))

  test("xz, bzip2 and zstd shards yield what the same .tar yields, whole, by positions and concatenated") {
    TestFiles.withTempDir("compressed") { dir =>
      Files.write(dir.resolve("a.tar"), tar)
      val plain = view(read(dir.resolve("a.tar")))
      assert(plain.size == 20 && plain.forall(_._5 == null))
      for (c <- codecs; suffix <- c.suffixes) {
        val file = Files.write(dir.resolve("a" + suffix), c.compress(tar))
        assert(view(read(file)) == plain, suffix)
        assert(read(file, Array(3, 17)).map(_.key) == Seq("k003", "k017"), suffix)
      }
      for (c <- codecs) { // two streams, one after the other, read as one, as xz, bzip2 and zstd do
        val file = Files.write(dir.resolve("two" + c.suffixes.head),
          c.compress(tar.take(10240)) ++ c.compress(tar.drop(10240)))
        assert(view(read(file)) == plain, c.name)
      }
    }
  }

  test("a truncated xz, bzip2 or zstd stream: the samples before the cut, then the damage naming the codec") {
    TestFiles.withTempDir("compressed-cut") { dir =>
      val big = samples(200) // 1 MB: several blocks of each codec
      for (c <- codecs) {
        val packed = c.compress(big)
        for (cut <- Seq(packed.length / 2, packed.length * 9 / 10, 5)) {
          val file = Files.write(dir.resolve(s"cut-$cut${c.suffixes.head}"), packed.take(cut))
          val got = read(file)
          val damage = got.last
          assert(damage.key == "(rest of shard)", s"${c.name} cut at $cut")
          assert(damage.problem.contains(s"the ${c.name} stream of file:$file is damaged after"), damage.problem)
          val good = got.init.filter(_.usable)
          assert(good.map(_.key) == (0 until good.size).map(i => f"k$i%03d"), c.name)
          // a codec decodes a block once it holds all of it (an LZMA2 chunk of up to 64 KiB
          // compressed, a bzip2 block of 100 kB at -1, a zstd block of up to 128 KiB): a cut
          // loses the block it falls in, not what came before
          if (cut == packed.length / 2) assert(good.size >= 40 && good.size < 100, s"${c.name}: ${good.size}")
        }
      }
    }
  }

  test("corrupt compressed bytes or a file of another kind are damage, never a crash or a hang") {
    TestFiles.withTempDir("compressed-bad") { dir =>
      for (c <- codecs) {
        val packed = c.compress(tar)
        val flipped = packed.clone()
        for (i <- packed.length / 2 until packed.length / 2 + 64) flipped(i) = (flipped(i) ^ 0x5a).toByte
        val got = read(Files.write(dir.resolve("flipped" + c.suffixes.head), flipped))
        assert(got.last.key == "(rest of shard)" || got.exists(!_.usable), got.map(_.problem))
        val notPacked = read(Files.write(dir.resolve("plain" + c.suffixes.head), tar))
        assert(notPacked.map(_.key) == Seq("(rest of shard)"), c.name)
        assert(notPacked.head.problem.contains(s"the ${c.name} stream of ") &&
          notPacked.head.problem.contains(" is damaged after 0 decompressed bytes: "), notPacked.head.problem)
      }
    }
  }

  test("an xz header declaring a 1 GiB dictionary is damage, refused before it is allocated") {
    TestFiles.withTempDir("xz-dict") { dir =>
      val xz = new XZCompressorOutputStream(_: OutputStream)
      val packed = Codec("xz", Nil, xz).compress(tar)
      // stream header (12 bytes), then the block header: size, flags, filter id 0x21 (LZMA2), its
      // properties' size (1) and the dictionary size code, padding, CRC-32 of what precedes it
      val headerSize = ((packed(12) & 0xff) + 1) * 4
      assert(packed(14) == 0x21 && packed(15) == 1, "an LZMA2 block header without size fields")
      packed(16) = 36 // a dictionary of 1 GiB, over TarCompression.XZ_MEMORY_LIMIT_KB
      val crc = new CRC32()
      crc.update(packed, 12, headerSize - 4)
      for (i <- 0 until 4) packed(12 + headerSize - 4 + i) = (crc.getValue >>> (8 * i)).toByte
      val got = read(Files.write(dir.resolve("dict.tar.xz"), packed))
      assert(got.map(_.key) == Seq("(rest of shard)"))
      assert(got.head.problem.contains("the xz stream of") && got.head.problem.contains("memory"), got.head.problem)
    }
  }

  test("closing a shard's stream closes its decompressor: zlib's and zstd's native memory is freed then") {
    val gzip = Codec("gzip", Seq(".tar.gz"), new java.util.zip.GZIPOutputStream(_))
    for (c <- codecs :+ gzip) {
      val compressed = new java.io.ByteArrayInputStream(c.compress(tar)) {
        var closed = false
        override def close(): Unit = { closed = true; super.close() }
      }
      val stream = TarCompression.forShard(compressed, "a" + c.suffixes.head)
      assert(stream.read(new Array[Byte](100)) == 100, c.name)
      stream.close()
      val field = classOf[DecompressedStream].getDeclaredField("in")
      field.setAccessible(true)
      val decompressor = field.get(stream).asInstanceOf[java.io.InputStream]
      // every codec's stream refuses a read once closed (zstd-jni, zlib, xz and bzip2 alike)
      assertThrows[java.io.IOException](decompressor.read(), c.name)
      assert(compressed.closed, c.name)
    }
  }
}
