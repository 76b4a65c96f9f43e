package dev.spindle.spark.feed

import java.nio.file.Files

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import dev.spindle.spark.shard.{Sample, SampleLimits, Shard, ShardFormat, ShardReader}
import dev.spindle.spark.testkit.{BadImages, TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileSystem
import org.scalatest.funsuite.AnyFunSuite

/** Reading given positions of a shard: only those samples come back, the rest are not read. */
class ShardSkipSuite extends AnyFunSuite {
  private val limits = new SampleLimits(1 << 20, 0)

  private def readAll(r: ShardReader): Seq[Sample] =
    try { val b = ArrayBuffer[Sample](); while (r.hasNext) b += r.next(); b.toSeq } finally r.close()

  test("a tar reader yields only the wanted positions and skips the others' bytes unread") {
    TestFiles.withTempDir("skip") { dir =>
      val big = 4 << 20 // 4 MiB per skipped image: reading them would show in the byte count
      val entries = (0 until 6).flatMap { i =>
        val image = if (i == 1 || i == 4) FeedData.png(i) else BadImages.garbage(big)
        Seq(s"k$i.png" -> image, s"k$i.cls" -> ascii(i.toString))
      }
      TestFiles.writeTar(dir.resolve("a.tar"), entries)
      val m = FeedData.manifest(dir)
      val conf = new Configuration()
      def bytesRead = FileSystem.getAllStatistics.asScala.filter(_.getScheme == "file").map(_.getBytesRead).sum
      val before = bytesRead
      val big64 = new SampleLimits(64 << 20, 0)
      val got = readAll(ShardReader.open(m.shards().get(0), conf, big64, Array(1, 4)))
      val read = bytesRead - before
      assert(got.map(_.position) == Seq(1L, 4L))
      assert(got.map(_.key) == Seq("k1", "k4"))
      assert(got.forall(_.usable()))
      assert(got.map(_.label.intValue) == Seq(1, 4))
      // 4 skipped images of 4 MiB; what is read is the wanted entries plus buffer refills (1 MiB)
      val skipped = 4L * big
      assert(read < skipped / 2, s"read $read bytes of a ${Files.size(dir.resolve("a.tar"))}-byte shard")
      // the whole shard, for comparison, reads the skipped images too: the counter works
      val beforeAll = bytesRead
      val all = readAll(ShardReader.open(m.shards().get(0), conf, big64))
      assert(all.map(_.position) == (0L until 6L))
      assert(bytesRead - beforeAll >= skipped)
    }
  }

  test("positions past a shard's end are simply not returned; bad positions are refused") {
    TestFiles.withTempDir("skip2") { dir =>
      FeedData.tars(dir, Seq(3))
      val shard = FeedData.manifest(dir).shards().get(0)
      val conf = new Configuration()
      assert(readAll(ShardReader.open(shard, conf, limits, Array(2, 7))).map(_.position) == Seq(2L))
      assert(readAll(ShardReader.open(shard, conf, limits, Array[Int]())).isEmpty)
      val e = intercept[IllegalArgumentException](ShardReader.open(shard, conf, limits, Array(2, 2)))
      assert(e.getMessage.contains("2 then 2 (must be strictly increasing)"))
    }
  }

  test("a folder reader opens only the wanted files") {
    TestFiles.withTempDir("skipdir") { dir =>
      for (c <- Seq("a", "b"); i <- 0 until 3) {
        Files.createDirectories(dir.resolve(c))
        Files.write(dir.resolve(s"$c/$i.png"), FeedData.png(i))
      }
      Files.write(dir.resolve("a/1.png"), Array[Byte]()) // unreadable if it were opened
      Files.delete(dir.resolve("b/0.png"))
      Files.write(dir.resolve("b/0.png"), FeedData.png(9))
      val m = FeedData.manifest(dir)
      val shard = m.shards().get(0)
      val got = readAll(ShardReader.open(shard, new Configuration(), limits, Array(0, 3, 5)))
      assert(got.map(_.key) == Seq("a/0.png", "b/0.png", "b/2.png"))
      assert(got.map(_.label.intValue) == Seq(0, 1, 1))
    }
  }

  test("a damaged shard read at positions yields those before the damage, then the damage") {
    TestFiles.withTempDir("skipbad") { dir =>
      val before = (0 until 3).flatMap(i => Seq(TarBlocks.file(s"k$i.png", FeedData.png(i)),
        TarBlocks.file(s"k$i.cls", ascii("1"))))
      val bad = TarBlocks.base256Size(TarBlocks.header(ascii("k3.png"), 0), -7)
      val tar = Files.write(dir.resolve("a.tar"),
        TarBlocks.tar(before ++ Seq(bad, TarBlocks.file("k4.png", FeedData.png(4))): _*))
      val shard = new Shard(tar.toUri.toString, ShardFormat.TAR, Files.size(tar), 0L, 6L,
        java.util.List.of())
      val reader = ShardReader.open(shard, new Configuration(), limits, Array(1, 3, 4))
      val got = readAll(reader)
      assert(got.map(s => (s.position, s.key)) == Seq((1L, "k1"), (3L, "(rest of shard)")))
      assert(got(1).problem.contains("entry 'k3.png': size field is negative"))
      assert(reader.damage().startsWith("entry 'k3.png': size field is negative"))
    }
  }
}
