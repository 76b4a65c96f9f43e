package dev.spindle.spark.shard

import java.io.{ByteArrayOutputStream, IOException, OutputStream}
import java.nio.file.{Files, Path}
import java.util.zip.GZIPOutputStream

import scala.jdk.CollectionConverters._

import dev.spindle.spark.preprocess.{PreprocessJob, TestSamples}
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream
import org.apache.commons.compress.compressors.xz.XZCompressorOutputStream
import org.apache.commons.compress.compressors.zstandard.ZstdCompressorOutputStream
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.manifest.ShardCatalog

/**
 * A folder is one layout or a clear error naming the files that do not fit; every file of it that
 * is not read is listed with its reason; compressed tar shards are read or refused by name.
 */
class InputLayoutSuite extends AnyFunSuite with SparkFixture {
  private val conf = new Configuration()
  private val jobConf = Map("spark.spindle.image.size" -> "8", "spark.spindle.batchSize" -> "4")

  private def catalog = new ShardCatalog(conf, 1000)

  private def list(in: Path): (Manifest, Seq[InputListing.Skipped]) = {
    val c = catalog
    (c.list(in.toString, ShardCatalog.Counter.onThisThread(conf)), c.skipped.asScala.toSeq)
  }

  private def jpeg(i: Int) = TestSamples.jpeg(3L, i, 32, 24)

  /** A tar of `n` JPEG samples whose keys start with `prefix`. */
  private def tar(prefix: String, n: Int): Array[Byte] =
    TestFiles.tarBytes((0 until n).flatMap(i => Seq(s"$prefix$i.jpg" -> jpeg(i), s"$prefix$i.cls" -> ascii("1"))))

  private def packed(bytes: Array[Byte], writer: OutputStream => OutputStream): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val c = writer(out)
    c.write(bytes)
    c.close()
    out.toByteArray
  }

  private def imageTree(root: Path, classes: Int, perClass: Int): Path = {
    for (c <- 0 until classes; i <- 0 until perClass) {
      Files.createDirectories(root.resolve(s"class$c"))
      Files.write(root.resolve(s"class$c/img$i.jpg"), jpeg(c * 100 + i))
    }
    root
  }

  test("a stray tar in an image folder tree is refused, naming it and the images, before any task") {
    TestFiles.withTempDir("stray-tar") { dir =>
      val in = imageTree(dir.resolve("in"), 4, 5)
      Files.write(in.resolve("backup.tar"), tar("b", 2))
      val e = intercept[IOException](list(in))
      assert(e.getMessage == s"Input $in mixes layouts: it holds 1 tar shard (backup.tar) and 20 images" +
        " (class0/img0.jpg, class0/img1.jpg, class0/img2.jpg, …); a data set is one layout (tar shards," +
        " Parquet files, or an image folder tree ROOT/<class>/<image>), and which one was meant cannot be" +
        " known: move the files that do not belong out of it, or point the input at a folder of one kind")
      val out = dir.resolve("out")
      val job = intercept[IOException](PreprocessJob.run(spark, in.toString, out.toString, false, jobConf.asJava))
      assert(job.getMessage.startsWith(s"Input $in mixes layouts"), job.getMessage)
      assert(!Files.exists(out.resolve("_manifest.json")))
      Files.move(in.resolve("backup.tar"), in.resolve("_backup.tar")) // a hidden side file is no data
      assert(list(in)._1.totalSamples == 20)
    }
  }

  test("tar shards and Parquet files together are refused, naming both") {
    TestFiles.withTempDir("tar-parquet") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      Files.write(in.resolve("a.tar"), tar("k", 1))
      Files.write(Files.createDirectories(in.resolve("p")).resolve("t.parquet"), ascii("PAR1"))
      val e = intercept[IOException](list(in))
      assert(e.getMessage.startsWith(s"Input $in mixes layouts: it holds 1 tar shard (a.tar) and 1" +
        " Parquet file (p/t.parquet)"), e.getMessage)
    }
  }

  test("a WebDataset folder reads .tar, .tar.gz, .tar.xz, .tar.bz2 and .tar.zst shards; other files are listed") {
    TestFiles.withTempDir("wds-compressed") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      Files.write(in.resolve("s0.tar"), tar("a", 3))
      Files.write(in.resolve("s1.tar.gz"), packed(tar("b", 3), new GZIPOutputStream(_)))
      Files.write(in.resolve("s2.tar.xz"), packed(tar("c", 3), new XZCompressorOutputStream(_)))
      Files.write(in.resolve("s3.tar.bz2"), packed(tar("d", 3), new BZip2CompressorOutputStream(_)))
      Files.write(in.resolve("s4.tar.zst"), packed(tar("e", 3), new ZstdCompressorOutputStream(_)))
      Files.write(in.resolve("README.md"), ascii("# my data set"))
      Files.write(Files.createDirectories(in.resolve("meta")).resolve("classes.txt"), ascii("a\nb"))
      Files.write(in.resolve("_SUCCESS"), Array.emptyByteArray) // hidden side files pass silently
      Files.write(in.resolve(".s9.tar.crc"), ascii("crc"))
      val (m, skipped) = list(in)
      assert(m.shards.asScala.map(s => s.uri.substring(s.uri.lastIndexOf('/') + 1)) ==
        Seq("s0.tar", "s1.tar.gz", "s2.tar.xz", "s3.tar.bz2", "s4.tar.zst"))
      assert(m.totalSamples == 15)
      val notShard = "not a tar shard (.tar, .tar.gz, .tgz, .tar.xz, .txz, .tar.bz2, .tbz2, .tbz, .tar.zst, .tzst)"
      assert(skipped.map(k => k.path.substring(k.path.indexOf("/in/") + 4) -> k.reason).toMap ==
        Map("README.md" -> notShard, "meta/classes.txt" -> notShard))
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false, jobConf.asJava)
      assert(report.get("images") == 15L && report.get("failures") == 0L)
      assert(ArrowFiles.readAll(dir.resolve("out")).map(_.key) ==
        Seq("a", "b", "c", "d", "e").flatMap(p => (0 until 3).map(i => s"$p$i")))
      val listed = report.get("input_skipped").asInstanceOf[java.util.List[java.util.Map[String, String]]].asScala
      assert(listed.map(_.get("path")).map(p => p.substring(p.indexOf("/in/") + 4)).toSet ==
        Set("README.md", "meta/classes.txt"))
      assert(report.get("input_skipped_total") == 2)
    }
  }

  test("a brace pattern names .tar.xz and .tar.bz2 shards like .tar ones") {
    TestFiles.withTempDir("brace-compressed") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      Files.write(in.resolve("s-0.tar.xz"), packed(tar("a", 2), new XZCompressorOutputStream(_)))
      Files.write(in.resolve("s-1.tar.xz"), packed(tar("b", 3), new XZCompressorOutputStream(_)))
      Files.write(in.resolve("t-0.tar.bz2"), packed(tar("c", 4), new BZip2CompressorOutputStream(_)))
      val m = catalog.list(s"$in/s-{0..1}.tar.xz", ShardCatalog.Counter.onThisThread(conf))
      assert(m.shards.asScala.map(_.samples) == Seq(2L, 3L))
      val b = catalog.list(s"$in/t-{0..0}.tar.bz2", ShardCatalog.Counter.onThisThread(conf))
      assert(b.totalSamples == 4)
    }
  }

  test("a tar compressed in a way Spindle does not read is refused by name, in a folder, a pattern or alone") {
    TestFiles.withTempDir("lz4") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      Files.write(in.resolve("s0.tar"), tar("a", 1))
      Files.write(in.resolve("s1.tar.lz4"), ascii("lz4 bytes"))
      val e = intercept[IOException](list(in))
      assert(e.getMessage.startsWith(s"Input $in holds 1 tar shard (s1.tar.lz4) compressed in a way Spindle" +
        " does not read; tar shards are read as .tar, .tar.gz, .tgz, .tar.xz"), e.getMessage)
      val p = intercept[IllegalArgumentException](catalog.list(s"$in/s{0,1}.tar.lz4", ShardCatalog.Counter.onThisThread(conf)))
      assert(p.getMessage.contains("s0.tar.lz4, a tar compressed in a way Spindle does not read"), p.getMessage)
      val f = intercept[IOException](list(in.resolve("s1.tar.lz4")))
      assert(f.getMessage.contains("is a file but not a shard (.tar, .tar.gz, .tgz, .tar.xz"), f.getMessage)
    }
  }
}
