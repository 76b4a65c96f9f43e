package dev.spindle.spark.preprocess
import java.io.IOException
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.{SparkFixture, TarBlocks, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/** An input whose shards hold no sample at all fails saying, per shard, what its bytes are. */
class EmptyInputSuite extends AnyFunSuite with SparkFixture {
  private def refused(in: Path): String = {
    val e = intercept[IOException](PreprocessJob.run(spark, in.toString,
      in.resolveSibling("out").toString, false, Map("spark.spindle.image.size" -> "8").asJava))
    assert(!Files.exists(in.resolveSibling("out").resolve("_manifest.json")))
    e.getMessage
  }

  private def shards(dir: Path, bytes: Array[Byte]*): Path = {
    Files.createDirectories(dir)
    bytes.zipWithIndex.foreach { case (b, i) => Files.write(dir.resolve(f"s$i%02d.tar"), b) }
    dir
  }

  test("shards that are empty files or zeros are named, with why; data behind zeros is read") {
    TestFiles.withTempDir("empty-input") { dir =>
      val dirsBehindZeros = new Array[Byte](512) ++
        TarBlocks.tar(TarBlocks.entry("images/".getBytes("UTF-8"), Array.emptyByteArray, '5'))
      val m = refused(shards(dir.resolve("in"), Array.emptyByteArray, new Array[Byte](1024), dirsBehindZeros))
      assert(m.startsWith(s"No samples in ${dir.resolve("in")}: all 3 shard(s) are empty or corrupt"), m)
      assert(!m.contains("empty shards)"), m)
      val lines = m.linesIterator.drop(1).toSeq
      assert(lines(0).contains("s00.tar: an empty file (0 bytes), not a tar archive"), m)
      assert(lines(1).contains("s01.tar: only zero bytes (1024): an empty archive, or a file" +
        " overwritten with zeros"), m)
      assert(lines(2).contains("s02.tar: no sample: a readable tar archive (2048 bytes) whose entries are" +
        " only directories"), m)
    }
  }

  test("data behind an end-of-archive block is read: a tar after zeros is delivered, garbage is damage") {
    TestFiles.withTempDir("behind-zeros") { dir =>
      val garbage = Array.tabulate[Byte](1536)(i => (i * 7 + 1).toByte)
      val good = TestSamples.jpeg(1L, 0, 32, 24)
      val afterZeros = new Array[Byte](1024) ++ TestFiles.tarBytes(Seq("k.jpg" -> good, "k.cls" -> "3".getBytes))
      val in = shards(dir.resolve("in"), new Array[Byte](512) ++ garbage, afterZeros)
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false,
        Map("spark.spindle.image.size" -> "8", "spark.spindle.maxFailures" -> "1").asJava)
      assert(report.get("images") == 1L && report.get("failures") == 1L)
      val q = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, Object]]].get(0)
      assert(q.get("key") == "(rest of shard)")
      assert(q.get("reason").toString.contains("(tar header at byte 512 of"),
        q.get("reason"))
    }
  }

  test("a valid tar of directories only says it holds no file entries") {
    TestFiles.withTempDir("dirs-only") { dir =>
      val dirOnly = TarBlocks.tar(TarBlocks.entry("images/".getBytes("UTF-8"), Array.emptyByteArray, '5'))
      val m = refused(shards(dir.resolve("in"), dirOnly))
      assert(m.contains("s00.tar: no sample: a readable tar archive (" + dirOnly.length +
        " bytes) whose entries are only directories, links, other entries that are not files, or" +
        " members that belong to no sample (names starting with '.', such as macOS's ._* files;" +
        " __MACOSX/; WebDataset's __…__ metadata)"), m)
    }
  }
}
