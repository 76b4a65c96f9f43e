package dev.spindle.spark.shard

import java.io.ByteArrayInputStream
import java.nio.file.Files

import scala.jdk.CollectionConverters._
import scala.sys.process._
import scala.util.Random

import dev.spindle.spark.testkit.{TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.scalatest.funsuite.AnyFunSuite

class TarShardReaderSuite extends AnyFunSuite {
  private def read(bytes: Array[Byte], max: Int = 1 << 20, classes: Int = 0)
      : (Seq[Sample], TarShardReader) = {
    val r = TarShardReader.of(new ByteArrayInputStream(bytes), "mem.tar", new SampleLimits(max, classes), null)
    (r.asScala.toSeq, r)
  }

  private def count(bytes: Array[Byte]): Long =
    TarShardReader.countSamples(new ByteArrayInputStream(bytes), "mem.tar")

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

  test("an image entry may be any format Spindle decodes, as torchvision's and WebDataset's") {
    val exts = Seq("webp", "bmp", "ppm", "pgm", "pbm", "pnm", "tif", "tiff", "gif", "JPEG", "PNG")
    val bytes = TestFiles.tarBytes(exts.zipWithIndex.flatMap { case (ext, i) =>
      Seq(s"k$i.$ext" -> image(i), s"k$i.cls" -> ascii(i.toString)) })
    val (samples, _) = read(bytes)
    assert(samples.map(_.imageName) == exts.zipWithIndex.map { case (e, i) => s"k$i.$e" })
    assert(samples.forall(_.usable), samples.map(_.problem))
    assert(samples.zipWithIndex.forall { case (s, i) => s.image.toSeq == image(i).toSeq })
    // other extensions stay no image: the sample lacks one, naming its entries
    val (other, _) = read(TestFiles.tarBytes(Seq("x.svg" -> image(0), "x.cls" -> ascii("1"))))
    assert(other.head.problem.startsWith("no image entry (") && other.head.problem.contains(
      "x.svg, x.cls"))
  }

  test("a sample without a label or image is marked with a reason, not dropped") {
    val bytes = TestFiles.tarBytes(Seq(
      "k1.jpg" -> Array[Byte](1), "k2.cls" -> ascii("1"), "k3.jpg" -> Array[Byte](1), "k3.cls" -> ascii("x")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("k1", "k2", "k3"))
    assert(samples(0).problem == "no label entry (.cls or .label) for key 'k1'; its entries: k1.jpg"
      + " (the key is the file name up to its first dot)")
    assert(samples(1).problem.startsWith("no image entry (.jpg, .jpeg, .png, .webp, .bmp, .ppm,"
      + " .pgm, .pbm, .pnm, .tif, .tiff or .gif) for key 'k2'"))
    assert(samples(2).problem.contains("label 'x' in k3.cls is not a plain decimal number"))
  }

  test("an image over the size limit is refused without reading it") {
    val bytes = TestFiles.tarBytes(Seq("big.jpg" -> new Array[Byte](5000), "big.cls" -> ascii("0")))
    val (samples, _) = read(bytes, max = 1000)
    assert(samples.head.problem.contains("5000 bytes, over spark.spindle.maxSampleBytes=1000"))
  }

  test("a truncated shard yields its complete samples, the damaged one, then its damage") {
    val full = TestFiles.tarBytes(Seq(
      "k1.jpg" -> new Array[Byte](700), "k1.cls" -> ascii("1"),
      "k2.jpg" -> new Array[Byte](2000), "k2.cls" -> ascii("2")))
    val cut = full.take(512 * 6 + 100) // k1 (5 blocks) + k2.jpg header + 100 content bytes
    val (samples, _) = read(cut)
    assert(samples.map(_.key) == Seq("k1", "k2", "(rest of shard)"))
    assert(samples(0).usable)
    assert(samples(1).problem == "shard damaged while reading entry k2.jpg: entry 'k2.jpg': the"
      + " archive ends inside this entry's content (tar header at byte 2560 of mem.tar)")
    assert(samples(2).problem.endsWith("the archive ends inside this entry's content (tar header at"
      + " byte 2560 of mem.tar)"))
    assert(count(cut) == 3)
  }

  test("a header claiming more content than the stream holds is damage, small or large") {
    // up to 16 MiB the content is read into one array of its size; past that in pieces, so a
    // damaged size fails at the stream's end without taking the memory it claims
    for (claimed <- Seq(2000, 40 << 20)) {
      val tar = TestFiles.tarBytes(Seq("k1.jpg" -> new Array[Byte](claimed), "k1.cls" -> ascii("1")))
      val cut = tar.take(512 + math.min(claimed / 2, 3000))
      val (samples, reader) = read(cut, max = 64 << 20)
      assert(samples.map(_.key) == Seq("k1", "(rest of shard)"), claimed)
      assert(reader.damage().startsWith("entry 'k1.jpg': the archive ends inside this entry's"
        + " content (tar header at byte 0 of mem.tar)"), reader.damage())
    }
  }

  test("a corrupt header after good samples ends the shard with its damage as the last sample") {
    val full = TestFiles.tarBytes(Seq("k1.jpg" -> Array[Byte](1), "k1.cls" -> ascii("1"), "k2.jpg" -> Array[Byte](2)))
    full(512 * 4 + 10) = 'X'.toByte // k2.jpg's header name: checksum no longer matches
    val (samples, reader) = read(full)
    assert(samples.map(_.key) == Seq("k1", "(rest of shard)"))
    assert(samples.head.usable)
    assert(reader.damage().startsWith("checksum"))
    assert(reader.damage().endsWith("(a corrupt header, or not a tar) (tar header at byte 2048 of"
      + " mem.tar)"))
    assert(count(full) == 2)
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

  test("an oversized label or image entry is one quarantined sample; the rest of the shard is read") {
    val entries = (0 until 13).flatMap { i =>
      val img = if (i == 9) new Array[Byte](3000) else image(i)
      val label = if (i == 6) ascii("1" * 5000) else ascii((i % 10).toString)
      Seq(f"k$i%02d.jpg" -> img, f"k$i%02d.cls" -> label)
    }
    val bytes = TestFiles.tarBytes(entries)
    val (samples, reader) = read(bytes, max = 2000)
    assert(samples.map(_.position) == (0L until 13L))
    assert(samples.filterNot(_.usable).map(_.key) == Seq("k06", "k09"))
    assert(samples(6).problem ==
      "label entry k06.cls is 5000 bytes, over the limit of 4096 bytes for a label")
    assert(samples(9).problem ==
      "image entry k09.jpg is 3000 bytes, over spark.spindle.maxSampleBytes=2000")
    assert(samples(12).label.intValue == 2 && samples(12).image.toSeq == image(12).toSeq)
    assert(reader.damage() == null)
    assert(count(bytes) == 13)
  }

  test("names that are not valid UTF-8 stay apart, with their bytes escaped in the key") {
    val ff = Array(0xff.toByte)
    val fe = Array(0xfe.toByte)
    val cafe = "café".getBytes("UTF-8") :+ 0xe9.toByte // a UTF-8 é, then a Latin-1 one
    val bytes = TarBlocks.tar(
      TarBlocks.entry(ff ++ ascii(".jpg"), image(1)), TarBlocks.entry(ff ++ ascii(".cls"), ascii("1")),
      TarBlocks.entry(fe ++ ascii(".jpg"), image(2)), TarBlocks.entry(fe ++ ascii(".cls"), ascii("2")),
      TarBlocks.entry(cafe ++ ascii(".jpg"), image(3)), TarBlocks.entry(cafe ++ ascii(".cls"), ascii("3")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("\\xff", "\\xfe", "café\\xe9"))
    assert(samples.map(_.label.intValue) == Seq(1, 2, 3))
    assert(samples.map(_.image.toSeq) == Seq(1, 2, 3).map(image(_).toSeq))
    assert(samples.map(_.imageName) == Seq("\\xff.jpg", "\\xfe.jpg", "café\\xe9.jpg"))
    assert(samples.forall(_.usable))
    assert(count(bytes) == 3)
  }

  test("a literal backslash is escaped too, so no name's key equals another's escaped bytes") {
    val raw = "caf".getBytes("UTF-8") :+ 0xe9.toByte
    val literal = ascii("caf\\xe9") // the characters c, a, f, backslash, x, e, 9
    val bytes = TarBlocks.tar(
      TarBlocks.entry(raw ++ ascii(".jpg"), image(1)), TarBlocks.entry(raw ++ ascii(".cls"), ascii("1")),
      TarBlocks.entry(literal ++ ascii(".jpg"), image(2)), TarBlocks.entry(literal ++ ascii(".cls"), ascii("2")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("caf\\xe9", "caf\\x5cxe9"))
    assert(samples.forall(_.usable), samples.map(_.problem))
  }

  test("a key that comes back after another sample is quarantined, naming its first position") {
    val bytes = TestFiles.tarBytes(Seq(
      "a.jpg" -> image(0), "a.cls" -> ascii("1"), "b.jpg" -> image(1), "b.cls" -> ascii("2"),
      "a.png" -> image(2), "a.cls" -> ascii("3"), "c.jpg" -> image(3), "c.cls" -> ascii("4")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("a", "b", "a", "c"))
    assert(samples.map(_.usable) == Seq(true, true, false, true))
    assert(samples(2).problem == "key 'a' is already the key of sample #0 of this shard"
      + " (a sample's entries must be consecutive; keys are unique within a shard)")
    assert(count(bytes) == 4)
  }

  test("a second entry with the same extension in one sample is reported") {
    val bytes = TestFiles.tarBytes(Seq(
      "d.jpg" -> image(0), "d.jpg" -> image(1), "d.cls" -> ascii("1"),
      "e.cls" -> ascii("1"), "e.jpg" -> image(2), "e.CLS" -> ascii("2"),
      "f.jpg" -> image(3), "f.png" -> image(4), "f.cls" -> ascii("3")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("d", "e", "f"))
    assert(samples(0).problem == "two entries with extension 'jpg' in sample 'd': d.jpg and d.jpg")
    assert(samples(1).problem == "two entries with extension 'cls' in sample 'e': e.cls and e.CLS")
    assert(samples(2).usable && samples(2).image.toSeq == image(3).toSeq) // a .png is another view
    assert(count(bytes) == 3)
  }

  test("a sample without an image names its entries and the first-dot rule") {
    val bytes = TestFiles.tarBytes(Seq("a.b.jpg" -> image(0), "a.cls" -> ascii("1")))
    val (samples, _) = read(bytes)
    assert(samples.map(_.key) == Seq("a"))
    assert(samples.head.problem == "no image entry (.jpg, .jpeg, .png, .webp, .bmp, .ppm, .pgm,"
      + " .pbm, .pnm, .tif, .tiff or .gif) for key 'a'; its entries:"
      + " a.b.jpg, a.cls (the key is the file name up to its first dot: a.b.jpg is key 'a' with"
      + " extension 'b.jpg')")
  }

  test("a negative, huge or non-octal size is the shard's damage: earlier samples, then the damage") {
    val edits = Seq[(String, Array[Byte] => Array[Byte], String)](
      ("negative", TarBlocks.base256Size(_, -5), "size field is negative"),
      ("huge", TarBlocks.base256Size(_, 1L << 50), "size field is 1125899906842624 bytes"),
      ("non-octal", TarBlocks.rawSize(_, "12x4"), "size field is not an octal number: '12x4'"))
    for ((what, edit, reason) <- edits) {
      val bytes = TarBlocks.tar(TarBlocks.file("k0.jpg", image(0)), TarBlocks.file("k0.cls", ascii("0")),
        edit(TarBlocks.header(ascii("k1.jpg"), 3)), image(1), TarBlocks.file("k1.cls", ascii("1")))
      val (samples, reader) = read(bytes)
      assert(samples.map(_.key) == Seq("k0", "(rest of shard)"), what)
      assert(samples.head.usable, what)
      assert(samples(1).problem.startsWith(
        "shard damaged; nothing after this point can be read: entry 'k1.jpg': " + reason), what)
      assert(samples(1).problem.endsWith("(tar header at byte 2048 of mem.tar)"), what)
      assert(reader.damage() == samples(1).problem.substring(samples(1).problem.indexOf("entry")))
      assert(count(bytes) == 2, what)
    }
  }

  test("counting and reading agree on thousands of damaged shards, and neither throws") {
    val rnd = new Random(24)
    for (c <- 0 until 3000) {
      val bytes = TarMutations.mutate(TarMutations.shard(rnd), rnd)
      val wanted = (0 until 12).filter(_ => rnd.nextInt(3) == 0).toArray
      try checkAgreement(bytes, wanted)
      catch {
        case e: org.scalatest.exceptions.TestFailedException => throw e
        case e: Throwable => fail(s"case $c threw $e", e)
      }
    }
  }

  /** count == samples read == positions 0..count-1, on plain and overshooting streams. */
  private def checkAgreement(bytes: Array[Byte], wanted: Array[Int]): Unit = {
    val n = count(bytes)
    val limits = new SampleLimits(1 << 20, 0)
    val all = TarShardReader.of(new ByteArrayInputStream(bytes), "m.tar", limits, null).asScala.toSeq
    assert(all.map(_.position) == (0L until n))
    assert(!all.exists(s => s.problem != null && s.problem.contains("unexpected parser failure")))
    val over = new TarMutations.OvershootingStream(bytes)
    assert(TarShardReader.countSamples(new TarMutations.OvershootingStream(bytes), "m.tar") == n)
    val overAll = TarShardReader.of(over, "m.tar", limits, null).asScala.toSeq
    assert(overAll.map(s => (s.key, s.problem)) == all.map(s => (s.key, s.problem)))
    val some = TarShardReader.of(new ByteArrayInputStream(bytes), "m.tar", limits, wanted)
      .asScala.toSeq
    assert(some.map(_.position) == wanted.filter(_ < n).map(_.toLong).toSeq)
    assert(some.map(s => (s.key, s.problem)) == some.map(s => all(s.position.toInt)).map(s => (s.key, s.problem)))
  }
}
