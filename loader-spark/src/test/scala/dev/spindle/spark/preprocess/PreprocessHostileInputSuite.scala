package dev.spindle.spark.preprocess
import java.io.RandomAccessFile
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.image.ImageTestSupport
import dev.spindle.spark.testkit.{ArrowFiles, BadImages, SparkFixture, TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.example.SampleImages

/**
 * `preprocess` end to end on the catalogue's edge inputs (docs/reliability.md): empty and 0x0
 * images, a 1x1 image, unicode, hostile and multi-dot names, a sparse member claiming 5 GiB.
 */
class PreprocessHostileInputSuite extends AnyFunSuite with SparkFixture {
  private def good(i: Int) = SampleImages.jpeg(5L, i, 64, 48)

  /** good0, a member claiming 5 GiB over a hole (no disk blocks written), good1. */
  private def sparseTar(file: Path): Path = {
    val raf = new RandomAccessFile(file.toFile, "rw")
    try {
      raf.write(TarBlocks.file("s0.jpg", good(0)) ++ TarBlocks.file("s0.cls", ascii("0")))
      raf.write(TarBlocks.header(ascii("big.jpg"), 5L << 30))
      raf.seek(raf.getFilePointer + (5L << 30))
      raf.write(TarBlocks.tar(TarBlocks.file("big.cls", ascii("1")),
        TarBlocks.file("s1.jpg", good(1)), TarBlocks.file("s1.cls", ascii("1"))))
    } finally raf.close()
    file
  }

  test("empty, 0x0, 1x1, unicode, absolute, '..' and multi-dot inputs have their defined outcomes") {
    TestFiles.withTempDir("hostile") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      val pixel = ImageTestSupport.encode("png", 1, 1)((_, _) => 0x3c7fe1)
      val entries = Seq(
        "zero.jpg" -> Array.emptyByteArray, "zero.cls" -> ascii("0"),
        "flat.png" -> BadImages.pngHeader(0, 0), "flat.cls" -> ascii("1"),
        "one.png" -> pixel, "one.cls" -> ascii("2"),
        "猫/café.jpg" -> good(3), "猫/café.cls" -> ascii("3"),
        "/abs/x.jpg" -> good(4), "/abs/x.cls" -> ascii("4"),
        "../../up.jpg" -> good(5), "../../up.cls" -> ascii("5"),
        "m.v2.jpg" -> good(6), "m.cls" -> ascii("6"))
      Files.write(in.resolve("a.tar"), TarBlocks.tar(entries.map { case (n, b) => TarBlocks.file(n, b) }: _*))
      sparseTar(in.resolve("b.tar"))
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false, Map(
        "spark.spindle.image.size" -> "16", "spark.spindle.maxFailures" -> "10").asJava)
      val q = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, Object]]]
        .asScala.map(e => e.get("key").toString -> e.get("reason").toString).toMap
      assert(q.keySet == Set("zero", "flat", "m", "big"))
      assert(q("zero") == "cannot decode zero.jpg: Empty image: 0 bytes")
      assert(q("flat") == "cannot decode flat.png: Invalid PNG size: 0x0")
      assert(q("m").contains("m.v2.jpg is key 'm' with extension 'v2.jpg'"), q("m"))
      assert(q("big") == "image entry big.jpg is 5368709120 bytes, over"
        + " spark.spindle.maxSampleBytes=" + (64 << 20), q("big"))
      val rows = ArrowFiles.readAll(dir.resolve("out"))
      assert(rows.map(r => r.key -> r.label) ==
        Seq("one" -> 2, "猫/café" -> 3, "/abs/x" -> 4, "../../up" -> 5, "s0" -> 0, "s1" -> 1))
      assert(rows.head.image.grouped(3).forall(_ == Seq(0x3c, 0x7f, 0xe1).map(_.toByte)))
      assert(report.get("samples") == 10L)
      // nothing was written by an entry's name: the temp folder holds the input and the output
      assert(Files.list(dir).iterator().asScala.map(_.getFileName.toString).toSet == Set("in", "out"))
    }
  }
}
