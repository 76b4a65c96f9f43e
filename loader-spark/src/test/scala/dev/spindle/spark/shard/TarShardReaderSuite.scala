package dev.spindle.spark.shard

import java.io.ByteArrayInputStream
import java.nio.file.Files

import scala.jdk.CollectionConverters._
import scala.sys.process._

import dev.spindle.spark.testkit.TestFiles
import dev.spindle.spark.testkit.TestFiles.ascii
import org.scalatest.funsuite.AnyFunSuite

class TarShardReaderSuite extends AnyFunSuite {
  private def read(bytes: Array[Byte], max: Int = 1 << 20, classes: Int = 0)
      : (Seq[Sample], TarShardReader) = {
    val r = TarShardReader.of(new ByteArrayInputStream(bytes), "mem.tar", new SampleLimits(max, classes), null)
    (r.asScala.toSeq, r)
  }

  private def image(i: Int) = Array[Byte](1, i.toByte)

  test("groups consecutive entries by key into samples with image and label") {
    val bytes = TestFiles.tarBytes(Seq(
      "a/k1.jpg" -> Array[Byte](1, 2, 3), "a/k1.cls" -> ascii("7"), "a/k1.json" -> ascii("{}"),
      "a/k2.png" -> Array[Byte](9), "a/k2.cls" -> ascii(" 3\n")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("a/k1", "a/k2"))
    assert(samples.map(_.label.intValue) == Seq(7, 3))
    assert(samples.map(_.position) == Seq(0L, 1L))
    assert(samples.head.image.toSeq == Seq[Byte](1, 2, 3))
    assert(samples(1).imageName == "a/k2.png")
    assert(samples.forall(_.usable))
    assert(TarShardReader.countSamples(new ByteArrayInputStream(bytes), "mem.tar") == 2)
  }

  test("a sample without a label or image is marked with a reason, not dropped") {
    val bytes = TestFiles.tarBytes(Seq(
      "k1.jpg" -> Array[Byte](1), "k2.cls" -> ascii("1"), "k3.jpg" -> Array[Byte](1), "k3.cls" -> ascii("x")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("k1", "k2", "k3"))
    assert(samples(0).problem.contains("no label entry (.cls) for key k1"))
    assert(samples(1).problem.contains("no image entry"))
    assert(samples(2).problem.contains("label 'x' in k3.cls is not a plain decimal number"))
  }

  test("an image over the size limit is refused without reading it") {
    val bytes = TestFiles.tarBytes(Seq("big.jpg" -> new Array[Byte](5000), "big.cls" -> ascii("0")))
    val (samples, _) = read(bytes, max = 1000)
    assert(samples.head.problem.contains("5000 bytes, over spark.spindle.maxSampleBytes=1000"))
  }

  test("a truncated shard yields its complete samples, then the damaged one, and stops") {
    val full = TestFiles.tarBytes(Seq(
      "k1.jpg" -> new Array[Byte](700), "k1.cls" -> ascii("1"),
      "k2.jpg" -> new Array[Byte](2000), "k2.cls" -> ascii("2")))
    val cut = full.take(512 * 6 + 100) // k1 (5 blocks) + k2.jpg header + 100 content bytes
    val (samples, _) = read(cut)
    assert(samples.map(_.key) == Seq("k1", "k2"))
    assert(samples(0).usable)
    assert(samples(1).problem.contains("shard damaged"))
    assert(TarShardReader.countSamples(new ByteArrayInputStream(cut), "cut.tar") == 2)
  }

  test("a corrupt header after good samples ends the shard and reports the damage") {
    val full = TestFiles.tarBytes(Seq("k1.jpg" -> Array[Byte](1), "k1.cls" -> ascii("1"), "k2.jpg" -> Array[Byte](2)))
    full(512 * 4 + 10) = 'X'.toByte // k2.jpg's header name: checksum no longer matches
    val (samples, reader) = read(full)
    assert(samples.map(_.key) == Seq("k1"))
    assert(samples.head.usable)
    assert(reader.damage().contains("checksum"))
    assert(TarShardReader.countSamples(new ByteArrayInputStream(full), "bad.tar") == 1)
  }

  test("reads archives written by GNU tar, including long names and pax headers") {
    TestFiles.withTempDir("gnutar") { dir =>
      val src = Files.createDirectories(dir.resolve("src"))
      val longKey = "d" * 60 + "/" + "sample_" + "x" * 80
      Files.createDirectories(src.resolve("d" * 60))
      Files.write(src.resolve(longKey + ".jpg"), Array[Byte](5, 6))
      Files.write(src.resolve(longKey + ".cls"), ascii("4"))
      Files.write(src.resolve("short.jpg"), Array[Byte](7))
      Files.write(src.resolve("short.cls"), ascii("1"))
      for (format <- Seq("gnu", "pax")) {
        val tar = dir.resolve(s"$format.tar")
        val cmd = Seq("tar", s"--format=$format", "--sort=name", "-cf", tar.toString, "-C", src.toString,
          "short.jpg", "short.cls", longKey + ".cls", longKey + ".jpg")
        assert(cmd.! == 0, s"tar failed: $cmd")
        val (samples, _) = read(Files.readAllBytes(tar))
        assert(samples.map(_.key) == Seq("short", longKey), format)
        assert(samples(1).image.toSeq == Seq[Byte](5, 6), format)
        assert(samples(1).label.intValue == 4, format)
      }
    }
  }

  test("a label is plain ASCII decimal digits within int32; anything else is quarantined") {
    val labels = Seq(" 7\n", "-1", "+5", "\u0663", "2147483647", "2147483648", " \n", "0x1",
      "1 2", "007", "9" * 60)
    val bytes = TestFiles.tarBytes(labels.zipWithIndex.flatMap { case (l, i) =>
      Seq(s"k$i.jpg" -> image(i), s"k$i.cls" -> l.getBytes("UTF-8"))
    })
    val (samples, _) = read(bytes)
    assert(samples.map(s => Option(s.label).map(_.intValue)) == Seq(Some(7), None, None, None,
      Some(Int.MaxValue), None, None, None, None, Some(7), None))
    def notPlain(v: String, i: Int) =
      s"label '$v' in k$i.cls is not a plain decimal number (ASCII digits 0-9 only, no sign)"
    assert(samples.map(s => Option(s.problem)) == Seq(None, Some(notPlain("-1", 1)),
      Some(notPlain("+5", 2)), Some(notPlain("\u0663", 3)), None,
      Some("label '2147483648' in k5.cls is over 2147483647, the largest int32 label"),
      Some("label entry k6.cls is empty"), Some(notPlain("0x1", 7)), Some(notPlain("1 2", 8)), None,
      Some(s"label '${"9" * 40}…' in k10.cls is over 2147483647, the largest int32 label")))
  }


  test("with spark.spindle.numClasses set, a label must be below it") {
    val bytes = TestFiles.tarBytes(Seq("a.jpg" -> image(0), "a.cls" -> ascii("9"),
      "b.jpg" -> image(1), "b.cls" -> ascii("10"), "c.jpg" -> image(2), "c.cls" -> ascii("2147483647")))
    val (samples, _) = read(bytes, classes = 10)
    assert(samples.map(s => Option(s.label).map(_.intValue)) == Seq(Some(9), None, None))
    assert(samples(1).problem == "label '10' in b.cls is not below spark.spindle.numClasses=10")
    assert(samples(2).problem ==
      "label '2147483647' in c.cls is not below spark.spindle.numClasses=10")
    val e = intercept[IllegalArgumentException](new SampleLimits(1 << 20, -2))
    assert(e.getMessage == "Invalid numClasses: -2 (must be >= 0; 0 = unknown)")
  }
}
