package dev.spindle.spark.shard

import java.io.ByteArrayInputStream
import java.nio.file.{Files, Path}
import java.util.zip.GZIPOutputStream

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import dev.spindle.spark.testkit.{TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * Member indexes of tar shards: the ranges one header walk records, the index files the counting
 * writes, and the indexed reader, which must yield exactly what the sequential reader yields.
 */
class TarIndexSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val limits = new SampleLimits(1 << 20, 0)

  /** What a sample is, arrays compared by content. */
  private def fields(s: Sample) =
    (s.shard, s.key, s.position, Option(s.image).map(_.toSeq), s.imageName, s.imageFile, s.label,
      s.problem)

  private def readAll(r: ShardReader): Seq[Sample] =
    try { val b = ArrayBuffer[Sample](); while (r.hasNext) b += r.next(); b.toSeq } finally r.close()

  private def walk(bytes: Array[Byte]) = TarShardReader.walk(new ByteArrayInputStream(bytes), "mem.tar")

  private def sequential(bytes: Array[Byte]): Seq[Sample] =
    readAll(TarShardReader.of(new ByteArrayInputStream(bytes), "mem.tar", limits, null))

  private def png(i: Int) = Array.fill(300 + 17 * i)(i.toByte)

  test("a sample's range runs from its first member's first header (pax, long name) to its last member's padded end") {
    val longKey = "d/" + "y" * 120
    val parts = Seq(
      TarBlocks.pax("path" -> ascii("a.png")), TarBlocks.entry(ascii("short"), png(1)), // a: pax
      TarBlocks.file("a.cls", ascii("1")),
      TarBlocks.file("._b.png", png(9)), // AppleDouble, a directory, __MACOSX/: of no sample
      TarBlocks.entry(ascii("dir/"), Array[Byte](), '5'),
      TarBlocks.file("__MACOSX/b.png", png(9)),
      TarBlocks.longName(ascii(longKey + ".png")), TarBlocks.entry(ascii("short"), png(2)), // b
      TarBlocks.file("._" + "b.cls", ascii("7")), // hidden inside b: passed over, b goes on
      TarBlocks.longName(ascii(longKey + ".cls")), TarBlocks.entry(ascii("short"), ascii("2")),
      TarBlocks.file("c.png", png(3)), TarBlocks.file("c.cls", ascii("3")))
    val bytes = TarBlocks.tar(parts: _*)
    val at = parts.scanLeft(0L)(_ + _.length) // where each part starts
    val w = walk(bytes)
    assert(w.samples == 3L && w.notIndexed == null)
    assert(w.starts.toSeq == Seq(at(0), at(6), at(11)))
    assert(w.ends.toSeq == Seq(at(3), at(11), at(13)))
    val all = sequential(bytes)
    assert(all.map(_.key) == Seq("a", longKey, "c") && all.forall(_.usable()))
    for (i <- 0 until 3) {
      val alone = TarShardReader.sampleAt(
        new ByteArrayInputStream(bytes, w.starts()(i).toInt, (w.ends()(i) - w.starts()(i)).toInt),
        "mem.tar", limits, i, w.starts()(i))
      assert(fields(alone.sample) == fields(all(i)) && alone.damage == null)
    }
  }

  test("a shard with a repeated key or damage gets no index, and says why") {
    val repeated = TarBlocks.tar(TarBlocks.file("a.png", png(1)), TarBlocks.file("b.png", png(2)),
      TarBlocks.file("a.cls", ascii("1")))
    val r = walk(repeated)
    assert(r.samples == 3L && r.starts == null, "counted as read, not indexed")
    assert(r.notIndexed.contains("'a' is already the key of sample #0"), r.notIndexed)
    val whole = TarBlocks.tar(TarBlocks.file("a.png", png(1)), TarBlocks.file("b.png", png(2)))
    val cut = whole.take(512 + 300)
    val d = walk(cut)
    assert(d.samples == 2L && d.starts == null)
    assert(d.notIndexed.contains("shard damaged"), d.notIndexed)
    val fine = walk(whole)
    assert(fine.notIndexed == null && fine.starts.length == 2)
  }

  test("counting writes an uncompressed tar's index file; a compressed one's, none, saying why") {
    TestFiles.withTempDir("tar-index-count") { dir =>
      val bytes = TarBlocks.tar(TarBlocks.file("a.png", png(1)), TarBlocks.file("a.cls", ascii("1")))
      Files.createDirectories(dir.resolve("sub"))
      TestFiles.writeTar(dir.resolve("sub/plain.tar"), Seq("a.png" -> png(1), "a.cls" -> ascii("1")))
      val gz = dir.resolve("sub/packed.tar.gz")
      val out = new GZIPOutputStream(Files.newOutputStream(gz))
      try out.write(bytes) finally out.close()
      val base = "file:" + dir
      val where = new TarIndexes("file:" + dir.resolve("_idx"), base)
      val how = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where)
      val plain = how.count(base + "/sub/plain.tar", conf)
      assert(plain.samples == 1L && plain.notIndexed == null)
      val file = dir.resolve("_idx/sub/plain.tar.idx")
      assert(Files.exists(file))
      val index = TarIndex.fromBytes(Files.readAllBytes(file))
      assert(index.samples == 1 && index.start(0) == 0L)
      assert(index.mismatch(shardOf(plain)) == null)
      val packed = how.count(base + "/sub/packed.tar.gz", conf)
      assert(packed.samples == 1L && packed.notIndexed == "a compressed tar has no random access")
      assert(!Files.exists(dir.resolve("_idx/sub/packed.tar.gz.idx")))
      assert(ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT).count(base + "/sub/plain.tar",
        conf).notIndexed == null, "no index asked, none said")
    }
  }

  test("an index file binds itself to its shard, and any damage to it is refused") {
    val index = new TarIndex(10240, 1700000000000L, 5L, Array(0L, 2048L, 5120L), Array(1024L, 4096L, 8704L))
    val bytes = index.toBytes
    assert(new String(bytes, 0, 20, "US-ASCII") == "spindle-tar-index/1\n")
    val back = TarIndex.fromBytes(bytes)
    assert((0 until 3).map(i => (back.start(i), back.end(i))) == Seq((0L, 1024L), (2048L, 4096L), (5120L, 8704L)))
    for (i <- bytes.indices; bit <- Seq(0x01, 0x80)) {
      val bad = bytes.clone()
      bad(i) = (bad(i) ^ bit).toByte
      intercept[IllegalArgumentException](TarIndex.fromBytes(bad))
    }
    intercept[IllegalArgumentException](TarIndex.fromBytes(bytes.take(bytes.length - 1)))
    def shard(bytes: Long, mtime: Long, samples: Long) =
      new Shard("file:/x.tar", ShardFormat.TAR, bytes, mtime, samples, java.util.List.of())
    assert(back.mismatch(shard(10240, 1700000000000L, 3)) == null)
    assert(back.mismatch(shard(10241, 1700000000000L, 3)).contains("10240 bytes"))
    assert(back.mismatch(shard(10240, 1700000000001L, 3)).contains("modified at"))
    assert(back.mismatch(shard(10240, 1700000000000L, 4)).contains("3 samples"))
    assert(back.changedSince(5L) == null && back.changedSince(6L).contains("inode change time"))
    assert(new TarIndex(1, 2, -1, Array[Long](), Array[Long]()).changedSince(6L) == null, "not a local file")
  }

  private def shardOf(c: FileCount) =
    new Shard(c.uri, ShardFormat.TAR, c.bytes, c.modificationTime, c.samples, java.util.List.of())

  /** A generated shard with members of no sample mixed in (AppleDouble, __MACOSX/). */
  private def generated(rnd: Random): Array[Byte] = {
    val base = TarMutations.shard(rnd)
    if (rnd.nextBoolean()) base
    else TarBlocks.file("._x.png", png(5)) ++ base ++ TarBlocks.file("__MACOSX/x.png", png(6))
  }

  test("over 300 generated shards and random plans, the indexed reader yields exactly the sequential reader's samples") {
    TestFiles.withTempDir("tar-index-prop") { dir =>
      val base = "file:" + dir
      val where = new TarIndexes("file:" + dir.resolve("_idx"), base)
      val how = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where)
      var indexed = 0
      for (seed <- 0 until 300) {
        val rnd = new Random(seed)
        val bytes = generated(rnd)
        val name = f"s$seed%03d.tar"
        Files.write(dir.resolve(name), bytes)
        val c = how.count(base + "/" + name, conf)
        val shard = shardOf(c)
        val positions = (0 until c.samples.toInt + 2).filter(_ => rnd.nextInt(3) == 0).toArray
        val io = new IoSettings(true, Seq(0L, 700L, 1L << 20)(rnd.nextInt(3)), 1 + rnd.nextInt(4), where)
        val counters = new IoCounters()
        val got = readAll(ShardReader.open(shard, conf, limits, positions, io, counters))
        val want = readAll(TarShardReader.open(shard, conf, limits, positions))
        assert(got.map(fields) == want.map(fields), s"seed $seed, positions ${positions.toSeq}")
        val byIndex = counters.counts().shardOpensIndexed
        assert(byIndex == (if (c.notIndexed == null) 1L else 0L), s"seed $seed: ${c.notIndexed}")
        if (c.notIndexed == null && positions.exists(_ < c.samples)) indexed += 1
      }
      assert(indexed > 100, s"only $indexed shards were read by their index")
    }
  }

  test("a damaged, stale or missing index file is refused: the shard is read whole, with the same samples") {
    TestFiles.withTempDir("tar-index-bad") { dir =>
      val base = "file:" + dir
      val where = new TarIndexes("file:" + dir.resolve("_idx"), base)
      val entries = (0 until 6).flatMap(i => Seq(s"k$i.png" -> png(i), s"k$i.cls" -> ascii(i.toString)))
      TestFiles.writeTar(dir.resolve("a.tar"), entries)
      val c = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where).count(base + "/a.tar", conf)
      val shard = shardOf(c)
      val io = new IoSettings(true, 0, 4, where)
      val positions = Array(1, 4)
      val want = readAll(TarShardReader.open(shard, conf, limits, positions)).map(fields)
      def read(s: Shard): (Seq[Any], IoCounts) = {
        TarIndexFiles.forgetCached()
        val counters = new IoCounters()
        (readAll(ShardReader.open(s, conf, limits, positions, io, counters)).map(fields), counters.counts())
      }
      val (good, goodIo) = read(shard)
      assert(good == want && goodIo.shardOpensIndexed == 1L)
      assert(goodIo.readRequests == 3L, goodIo) // the index file, then one read per planned sample
      // stale: the manifest records another version of the shard (here: another modification time)
      val stale = new Shard(shard.uri, ShardFormat.TAR, shard.bytes, shard.modificationTime + 1000,
        shard.samples, java.util.List.of())
      val (s, sIo) = read(stale)
      assert(s == want && sIo.shardOpens == 1L && sIo.shardOpensIndexed == 0L)
      // damaged: one bit flipped
      val file = dir.resolve("_idx/a.tar.idx")
      val bytes = Files.readAllBytes(file)
      bytes(bytes.length / 2) = (bytes(bytes.length / 2) ^ 4).toByte
      Files.write(file, bytes)
      val (d, dIo) = read(shard)
      assert(d == want && dIo.shardOpensIndexed == 0L)
      // missing
      Files.delete(file)
      val (m, mIo) = read(shard)
      assert(m == want && mIo.shardOpensIndexed == 0L)
    }
  }

  test("a shard damaged in place after it was indexed (same size and time) yields what a read in order yields") {
    TestFiles.withTempDir("tar-index-damaged") { dir =>
      val base = "file:" + dir
      val where = new TarIndexes("file:" + dir.resolve("_idx"), base)
      val entries = (0 until 8).flatMap(i => Seq(s"k$i.png" -> png(i), s"k$i.cls" -> ascii(i.toString)))
      val file = dir.resolve("a.tar")
      TestFiles.writeTar(file, entries)
      val c = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where).count(base + "/a.tar", conf)
      val shard = shardOf(c)
      val indexFile = dir.resolve("_idx/a.tar.idx")
      val taken = Files.readAllBytes(indexFile)
      /** The index as a store without an inode change time would have it (the field -1). */
      def withoutChangeTime(): Unit = {
        val b = java.nio.ByteBuffer.wrap(taken.clone())
        b.putLong(36, -1L) // after the format line, the shard's size and modification time
        val crc = new java.util.zip.CRC32C()
        crc.update(b.array(), 0, b.limit() - 4)
        b.putInt(b.limit() - 4, crc.getValue.toInt)
        Files.write(indexFile, b.array())
        Files.deleteIfExists(dir.resolve("_idx/.a.tar.idx.crc")) // Hadoop's side file: now stale
      }
      def compare(positions: Array[Int], byIndex: Long, what: String): Unit = {
        TarIndexFiles.forgetCached()
        val counters = new IoCounters()
        val indexed = ShardReader.open(shard, conf, limits, positions, new IoSettings(true, 0, 4, where), counters)
        val got = readAll(indexed)
        val sequential = TarShardReader.open(shard, conf, limits, positions)
        val want = readAll(sequential)
        assert(got.map(fields) == want.map(fields), s"$what, positions ${positions.toSeq}")
        assert(indexed.damage() == sequential.damage(), s"$what, positions ${positions.toSeq}")
        assert(counters.counts().shardOpensIndexed == byIndex, s"$what, positions ${positions.toSeq}")
      }
      val original = Files.readAllBytes(file)
      val mtime = Files.getLastModifiedTime(file)
      // a sample's first header; the label header of a sample (its image read, then the damage)
      for (name <- Seq("k3.png", "k3.cls")) {
        val bytes = original.clone()
        bytes(bytes.indexOfSlice(ascii(name))) = 'X'.toByte // the header's checksum fails
        Files.write(file, bytes)
        Files.setLastModifiedTime(file, mtime)
        Files.write(indexFile, taken)
        // a local file: its inode change time moved, so the index is refused, whatever is planned
        for (positions <- Seq(Array(2, 3, 4, 6), Array(3, 4), Array(3, 6), Array(4, 5)))
          compare(positions, 0, s"$name, local")
        // where no change time is known: damage inside the planned samples' bytes is met as a
        // read in order meets it (damage outside them is not read, so not seen)
        withoutChangeTime()
        for (positions <- Seq(Array(2, 3, 4, 6), Array(3, 4), Array(3, 6), Array(3)))
          compare(positions, 1, s"$name, no change time")
      }
    }
  }

  test("a local shard is read by position without Hadoop's checksum stream, unless a .crc side file checks it") {
    TestFiles.withTempDir("tar-index-crc") { dir =>
      val base = "file:" + dir
      val where = new TarIndexes("file:" + dir.resolve("_idx"), base)
      val entries = (0 until 8).flatMap(i => Seq(s"k$i.png" -> png(i), s"k$i.cls" -> ascii(i.toString)))
      val bytes = TarBlocks.tar(entries.map { case (n, b) => TarBlocks.file(n, b) }: _*)
      // written through Hadoop's local file system: a .crc side file beside it
      val local = org.apache.hadoop.fs.FileSystem.getLocal(conf)
      val tar = new org.apache.hadoop.fs.Path(base + "/a.tar")
      val out = local.create(tar)
      try out.write(bytes) finally out.close()
      val crc = dir.resolve(".a.tar.crc")
      assert(Files.exists(crc))
      val c = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where).count(base + "/a.tar", conf)
      val shard = shardOf(c)
      val io = new IoSettings(true, 0, 4, where)
      val positions = Array(1, 2, 5)
      def read() = readAll(ShardReader.open(shard, conf, limits, positions, io, new IoCounters()))
      val want = readAll(TarShardReader.open(shard, conf, limits, positions)).map(fields)
      assert(read().map(fields) == want)
      // a side file of other bytes of the same length: the shard's reads are checked against it
      val other = new org.apache.hadoop.fs.Path(base + "/other.tar")
      val o = local.create(other)
      try o.write(bytes.map(b => (b ^ 0x5a).toByte)) finally o.close()
      Files.copy(dir.resolve(".other.tar.crc"), crc, java.nio.file.StandardCopyOption.REPLACE_EXISTING)
      val e = intercept[java.io.UncheckedIOException](read())
      assert(e.getMessage.contains(base + "/a.tar") && e.getMessage.contains("Checksum"), e.getMessage)
      Files.delete(crc) // no side file: positioned reads of the file itself, the same samples
      assert(read().map(fields) == want)
    }
  }

  test("the ranged reads of every shard opened are in flight at once, at most spark.spindle.io.concurrency") {
    TestFiles.withTempDir("tar-index-overlap") { dir =>
      val slow = SlowReadsFileSystem.register(new Configuration())
      val base = SlowReadsFileSystem.uri(dir)
      val where = new TarIndexes(base + "/_idx", base)
      val how = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where)
      val shards = (0 until 6).map { s =>
        TestFiles.writeTar(dir.resolve(s"s$s.tar"),
          (0 until 10).flatMap(i => Seq(s"k$i.png" -> png(i), s"k$i.cls" -> ascii(i.toString))))
        shardOf(how.count(base + s"/s$s.tar", slow))
      }
      SlowReadsFileSystem.reset()
      val io = new IoSettings(true, 0, 4, where)
      val counters = new IoCounters()
      val positions = Array(1, 4, 7) // 3 ranges per shard: 18 reads of 30 ms each
      val readers = shards.map(ShardReader.open(_, slow, limits, positions, io, counters)) // as RowSource does
      val got = readers.map(r => readAll(r).map(_.position))
      assert(got.forall(_ == Seq(1L, 4L, 7L)))
      assert(counters.counts().shardOpensIndexed == 6L)
      val most = SlowReadsFileSystem.mostInFlight
      assert(most >= 3 && most <= 4, s"at most $most reads in flight at once")
    }
  }

  test("planned samples closer than coalesceBytes are read in one request, farther ones in their own") {
    TestFiles.withTempDir("tar-index-coalesce") { dir =>
      val base = "file:" + dir
      val where = new TarIndexes("file:" + dir.resolve("_idx"), base)
      val entries = (0 until 20).flatMap(i => Seq(f"k$i%02d.png" -> Array.fill(4096)(i.toByte), f"k$i%02d.cls" -> ascii("1")))
      TestFiles.writeTar(dir.resolve("a.tar"), entries)
      val c = ShardFiles.counting(ShardFormat.TAR, ParquetColumns.DEFAULT, where).count(base + "/a.tar", conf)
      val shard = shardOf(c)
      val sampleBytes = (512 + 4096 + 512 + 512).toLong // two headers, the image, the padded label
      def requests(positions: Array[Int], gap: Long): IoCounts = {
        val counters = new IoCounters()
        val got = readAll(ShardReader.open(shard, conf, limits, positions, new IoSettings(true, gap, 4, where), counters))
        assert(got.map(_.position) == positions.toSeq.map(_.toLong))
        counters.counts()
      }
      requests(Array(0), 0) // the index is fetched once, then cached for the executor
      val apart = requests(Array(1, 3, 5, 9), 0)
      assert(apart.readRequests == 4L && apart.bytesRead == 4 * sampleBytes, apart)
      val joined = requests(Array(1, 3, 5, 9), 3 * sampleBytes)
      assert(joined.readRequests == 1L && joined.bytesRead == 9 * sampleBytes, joined) // 1..9, gaps read
      val partly = requests(Array(1, 3, 5, 9), sampleBytes)
      assert(partly.readRequests == 2L && partly.bytesRead == (5 + 1) * sampleBytes, partly)
    }
  }
}

/**
 * The local file system under the scheme `slowreads:`, whose positioned reads take 30 ms each and
 * record how many were in flight at once (the most since the last reset).
 */
class SlowReadsFileSystem extends org.apache.hadoop.fs.RawLocalFileSystem {
  override def getUri: java.net.URI = java.net.URI.create("slowreads:///")
  override def getScheme: String = "slowreads"

  override def open(p: org.apache.hadoop.fs.Path, bufferSize: Int): org.apache.hadoop.fs.FSDataInputStream =
    new org.apache.hadoop.fs.FSDataInputStream(new SlowReadsFileSystem.Slow(super.open(p, bufferSize)))
}

object SlowReadsFileSystem {
  private val inFlight = new java.util.concurrent.atomic.AtomicInteger()
  private val most = new java.util.concurrent.atomic.AtomicInteger()

  def register(conf: Configuration): Configuration = {
    conf.set("fs.slowreads.impl", classOf[SlowReadsFileSystem].getName)
    conf.setBoolean("fs.slowreads.impl.disable.cache", true)
    conf
  }

  def uri(p: Path): String = "slowreads://" + p.toAbsolutePath.toString
  def reset(): Unit = most.set(0)
  def mostInFlight: Int = most.get

  private final class Slow(in: org.apache.hadoop.fs.FSDataInputStream) extends org.apache.hadoop.fs.FSInputStream {
    override def seek(pos: Long): Unit = in.seek(pos)
    override def getPos: Long = in.getPos
    override def seekToNewSource(targetPos: Long): Boolean = false
    override def read(): Int = in.read()
    override def read(b: Array[Byte], off: Int, len: Int): Int = in.read(b, off, len)
    override def close(): Unit = in.close()
    override def readFully(position: Long, b: Array[Byte], off: Int, len: Int): Unit = {
      val now = inFlight.incrementAndGet()
      most.accumulateAndGet(now, math.max)
      try { Thread.sleep(30); in.readFully(position, b, off, len) } finally inFlight.decrementAndGet()
    }
  }
}
