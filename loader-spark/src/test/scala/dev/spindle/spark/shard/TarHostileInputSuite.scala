package dev.spindle.spark.shard

import java.io.{ByteArrayInputStream, FileInputStream, InputStream, RandomAccessFile}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.{TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.scalatest.funsuite.AnyFunSuite

/**
 * Tar archives built to attack a reader: names that would escape a folder, links, floods of empty
 * members, metadata over the limits and members that claim gigabytes (docs/reliability.md).
 */
class TarHostileInputSuite extends AnyFunSuite {
  private def readAll(in: InputStream, max: Int = 1 << 20): (Seq[Sample], TarShardReader) = {
    val r = TarShardReader.of(in, "mem.tar", new SampleLimits(max, 0), null)
    try (r.asScala.toSeq, r) finally r.close()
  }

  private def read(bytes: Array[Byte]) = readAll(new ByteArrayInputStream(bytes))

  private def count(bytes: Array[Byte]) = TarShardReader.countSamples(new ByteArrayInputStream(bytes), "mem.tar")

  private def image(i: Int) = Array[Byte](1, i.toByte)

  test("absolute and '..' names are keys as stored: nothing is opened or written by name") {
    val names = Seq("/etc/passwd", "../../escape", "a/../../b", "./c")
    val bytes = TarBlocks.tar(names.zipWithIndex.flatMap { case (n, i) =>
      Seq(TarBlocks.file(n + ".jpg", image(i)), TarBlocks.file(n + ".cls", ascii(i.toString)))
    }: _*)
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == names)
    assert(samples.forall(_.usable), samples.map(_.problem))
    assert(samples.map(_.label.intValue) == names.indices)
    assert(count(bytes) == names.size)
  }

  test("symlink and hard-link members are never followed nor samples; a linked image is missing") {
    val bytes = TarBlocks.tar(
      TarBlocks.file("k0.jpg", image(0)), TarBlocks.file("k0.cls", ascii("0")),
      linkEntry("k1.jpg", "/etc/shadow", '2'), TarBlocks.file("k1.cls", ascii("1")),
      linkEntry("k2.jpg", "k0.jpg", '1'), TarBlocks.file("k2.cls", ascii("2")),
      linkEntry("loose", "/dev/zero", '2'), // a link that no sample owns
      TarBlocks.file("k3.jpg", image(3)), TarBlocks.file("k3.cls", ascii("3")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("k0", "k1", "k2", "k3"))
    assert(samples.map(_.usable) == Seq(true, false, false, true))
    assert(samples(1).problem.startsWith("no image entry (.jpg, .jpeg, .png, .webp, .bmp,"
      + " .ppm, .pgm, .pbm, .pnm, .tif, .tiff or .gif) for key 'k1'; its entries: k1.cls"))
    assert(samples(2).problem.startsWith("no image entry (.jpg, .jpeg, .png, .webp, .bmp,"
      + " .ppm, .pgm, .pbm, .pnm, .tif, .tiff or .gif) for key 'k2'; its entries: k2.cls"))
    assert(count(bytes) == 4)
  }

  test("100,000 empty members are 100,000 listed samples, read and counted in seconds") {
    val n = 100000
    val one = TarBlocks.header(ascii("k000000.jpg"), 0)
    val bytes = new Array[Byte](n * TarBlocks.Block + 2 * TarBlocks.Block)
    val digitsSum = "000000".map(_.toInt).sum
    for (i <- 0 until n) { // the same header with another name: the checksum moves by the digits'
      val name = f"k$i%06d".getBytes("US-ASCII")
      val h = one.clone()
      name.copyToArray(h)
      val sum = Integer.parseInt(new String(one, 148, 6, "US-ASCII"), 8) + name.map(_.toInt).sum -
        'k' - digitsSum
      f"$sum%06o".getBytes("US-ASCII").copyToArray(h, 148)
      System.arraycopy(h, 0, bytes, i * TarBlocks.Block, TarBlocks.Block)
    }
    val start = System.nanoTime()
    val (samples, reader) = read(bytes)
    val counted = count(bytes)
    val seconds = (System.nanoTime() - start) / 1e9
    info(f"read and counted in $seconds%.1f s")
    assert(counted == n)
    assert(samples.size == n && samples.map(_.position) == (0L until n))
    assert(samples.forall(s => s.problem == "no label entry (.cls or .label) for key '" + s.key
      + "'; its entries: " + s.key + ".jpg (the key is the file name up to its first dot)"))
    assert(reader.damage() == null)
    assert(seconds < 60, s"$seconds s") // a quadratic reader would take hours
  }

  test("a pax path or GNU long name over 1 MiB is the shard's damage; a 64 KiB name is a key") {
    val long = ascii("n" * (64 << 10))
    val ok = TarBlocks.tar(TarBlocks.pax("path" -> (long ++ ascii(".jpg"))), TarBlocks.file("x.jpg", image(1)),
      TarBlocks.pax("path" -> (long ++ ascii(".cls"))), TarBlocks.file("x.cls", ascii("1")))
    val (good, _) = read(ok)
    assert(good.map(_.key) == Seq("n" * (64 << 10)) && good.head.usable)
    val huge = ascii("n" * ((1 << 20) + 1))
    for ((what, meta, limit) <- Seq(
        ("pax header", TarBlocks.pax("path" -> huge), "pax header of 1048591 bytes"),
        ("GNU long name", TarBlocks.longName(huge), "GNU long name of 1048578 bytes"))) {
      val bytes = TarBlocks.tar(TarBlocks.file("k0.jpg", image(0)), TarBlocks.file("k0.cls", ascii("0")),
        meta, TarBlocks.file("x.jpg", image(1)), TarBlocks.file("k2.cls", ascii("2")))
      val (samples, reader) = read(bytes)
      assert(samples.map(_.key) == Seq("k0", "(rest of shard)"), what)
      assert(samples.head.usable, what)
      assert(reader.damage().contains(limit + ", over the limit of 1048576 (tar header at byte 2048"
        + " of mem.tar)"), reader.damage())
      assert(count(bytes) == 2, what)
    }
  }

  test("a sparse member claiming 5 GiB is refused unread, and the samples after it are read") {
    TestFiles.withTempDir("sparse") { dir =>
      val file = dir.resolve("sparse.tar")
      val big = 5L << 30
      val raf = new RandomAccessFile(file.toFile, "rw")
      try {
        raf.write(TarBlocks.file("k0.jpg", image(0)) ++ TarBlocks.file("k0.cls", ascii("0")))
        raf.write(TarBlocks.header(ascii("big.jpg"), big))
        raf.seek(raf.getFilePointer + big) // a hole: nothing written, nothing allocated on disk
        raf.write(TarBlocks.tar(TarBlocks.file("big.cls", ascii("1")),
          TarBlocks.file("k2.jpg", image(2)), TarBlocks.file("k2.cls", ascii("2"))))
      } finally raf.close()
      val in = new CountingStream(new FileInputStream(file.toFile))
      val (samples, reader) = readAll(in, max = 1 << 20)
      val countIn = new CountingStream(new FileInputStream(file.toFile))
      val counted = TarShardReader.countSamples(countIn, "mem.tar")
      countIn.close()
      assert(samples.map(_.key) == Seq("k0", "big", "k2"))
      assert(samples.map(_.usable) == Seq(true, false, true))
      assert(samples(1).problem == "image entry big.jpg is 5368709120 bytes, over"
        + " spark.spindle.maxSampleBytes=1048576")
      assert(samples(2).image.toSeq == image(2).toSeq && reader.damage() == null)
      assert(counted == 3)
      // skipped, not read: the hole's bytes never pass through either reader
      assert(in.bytesRead < (1 << 20) && countIn.bytesRead < (1 << 20),
        s"${in.bytesRead}, ${countIn.bytesRead} bytes read")
      assert(in.skipped > big - (1 << 20) && countIn.skipped > big - (1 << 20))
    }
  }

  test("Spindle's own tar writer refuses a name it cannot store instead of writing '?'") {
    val e = intercept[IllegalArgumentException](TestFiles.tarBytes(Seq("café.jpg" -> image(0))))
    assert(e.getMessage == "Invalid tar entry name: 'café.jpg' (ASCII only)")
  }

  /** Counts the bytes read and the bytes skipped through it. */
  private final class CountingStream(in: InputStream) extends java.io.FilterInputStream(in) {
    var bytesRead = 0L
    var skipped = 0L
    override def read(): Int = { val b = super.read(); if (b >= 0) bytesRead += 1; b }
    override def read(b: Array[Byte], off: Int, len: Int): Int = {
      val n = super.read(b, off, len); if (n > 0) bytesRead += n; n
    }
    override def skip(n: Long): Long = { val k = super.skip(n); skipped += k; k }
  }

  private def linkEntry(name: String, target: String, typeflag: Char): Array[Byte] = {
    val h = TarBlocks.header(ascii(name), 0, typeflag)
    ascii(target).copyToArray(h, 157) // linkname
    TarBlocks.seal(h)
  }
}
