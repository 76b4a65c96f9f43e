package dev.spindle.spark.shard

import java.io.ByteArrayOutputStream
import java.nio.file.{Files, Path}
import java.util.zip.GZIPOutputStream

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.hadoop.conf.Configuration
import org.scalatest.concurrent.TimeLimits
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.SpanSugar._
import dev.spindle.spark.manifest.ShardCatalog

/** `.tar.gz` / `.tgz` shards read like `.tar`; a damaged gzip stream is the shard's damage. */
class GzipTarSuite extends AnyFunSuite with TimeLimits {
  private val conf = new Configuration()
  private val limits = new SampleLimits(1 << 20, 0)

  private def gzip(bytes: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val gz = new GZIPOutputStream(out)
    gz.write(bytes)
    gz.close()
    out.toByteArray
  }

  /** 20 samples with incompressible-ish images, so a cut lands inside the archive. */
  private val tar = TestFiles.tarBytes((0 until 20).flatMap { i =>
    val image = Array.tabulate[Byte](3000)(j => ((j * j * 31 + i * 7) >> 3).toByte)
    Seq(f"k$i%02d.jpg" -> image, f"k$i%02d.cls" -> ascii((i % 5).toString))
  })

  private def read(file: Path, positions: Array[Int] = null): Seq[Sample] = failAfter(30.seconds) {
    val m = new ShardCatalog(conf, 1000).list(file.toString, ShardCatalog.Counter.onThisThread(conf))
    val shard = m.shards.get(0)
    val r = if (positions == null) ShardReader.open(shard, conf, limits) else ShardReader.open(shard, conf, limits, positions)
    val samples = try r.asScala.toSeq finally r.close()
    assert(shard.samples == samples.size, "counting and reading agree")
    samples
  }

  test(".tar.gz and .tgz shards yield what the same .tar yields, whole or by positions") {
    TestFiles.withTempDir("tgz") { dir =>
      Files.write(dir.resolve("a.tar"), tar)
      Files.write(dir.resolve("a.tgz"), gzip(tar))
      Files.write(dir.resolve("a.tar.gz"), gzip(tar))
      def view(s: Seq[Sample]) = s.map(x => (x.key, x.position, x.label, x.image.toSeq, x.problem))
      val plain = view(read(dir.resolve("a.tar")))
      assert(plain.size == 20 && plain.forall(_._5 == null))
      assert(view(read(dir.resolve("a.tgz"))) == plain)
      assert(view(read(dir.resolve("a.tar.gz"))) == plain)
      val some = new ShardCatalog(conf, 1000).list(dir.resolve("a.tgz").toString, ShardCatalog.Counter.onThisThread(conf))
      val r = ShardReader.open(some.shards.get(0), conf, limits, Array(3, 17))
      try assert(r.asScala.map(_.key).toSeq == Seq("k03", "k17")) finally r.close()
      // concatenated gzip members read as one stream, as gzip itself does
      Files.write(dir.resolve("b.tgz"), gzip(tar.take(10240)) ++ gzip(tar.drop(10240)))
      assert(view(read(dir.resolve("b.tgz"))) == plain)
    }
  }

  test("a truncated gzip stream: the samples before the cut, then the damage with its reason") {
    TestFiles.withTempDir("tgz-cut") { dir =>
      val gz = gzip(tar)
      for (cut <- Seq(gz.length / 2, gz.length * 9 / 10, 5)) {
        val file = dir.resolve(s"cut-$cut.tgz")
        Files.write(file, gz.take(cut))
        val got = read(file)
        val damage = got.last
        assert(damage.key == "(rest of shard)")
        assert(damage.problem.contains(s"the gzip stream of file:$file is damaged after"), damage.problem)
        val why = if (cut == 5) "after 0 decompressed bytes: it ends early" else "Unexpected end of ZLIB input stream"
        assert(damage.problem.contains(why), damage.problem)
        val good = got.init.filter(_.usable)
        assert(good.map(_.key) == (0 until good.size).map(i => f"k$i%02d"))
        if (cut == gz.length / 2) assert(good.size >= 5 && good.size < 20, good.size)
      }
    }
  }

  test("corrupt compressed bytes or a file that is not gzip are damage, never a crash or a hang") {
    TestFiles.withTempDir("tgz-bad") { dir =>
      val gz = gzip(tar)
      val flipped = gz.clone()
      for (i <- gz.length / 2 until gz.length / 2 + 64) flipped(i) = (flipped(i) ^ 0x5a).toByte
      Files.write(dir.resolve("flipped.tgz"), flipped)
      val got = read(dir.resolve("flipped.tgz"))
      assert(got.last.key == "(rest of shard)" || got.exists(!_.usable), got.map(_.problem))
      Files.write(dir.resolve("plain.tgz"), tar) // a .tgz that is an uncompressed tar
      val notGzip = read(dir.resolve("plain.tgz"))
      assert(notGzip.map(_.key) == Seq("(rest of shard)"))
      assert(notGzip.head.problem.contains("Not in GZIP format"), notGzip.head.problem)
    }
  }
}
