package dev.spindle.spark.shard

import java.io.ByteArrayInputStream
import java.nio.file.Files

import scala.jdk.CollectionConverters._
import scala.sys.process._

import dev.spindle.spark.testkit.{TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.scalatest.funsuite.AnyFunSuite

/**
 * Which members of a tar make samples, where an archive ends, and what a sample's two label
 * entries must agree on; each checked on reading and on counting, which must agree.
 */
class TarMemberRulesSuite extends AnyFunSuite {
  private val limits = new SampleLimits(1 << 20, 0)

  private def read(bytes: Array[Byte]): Seq[Sample] = {
    val r = TarShardReader.of(new ByteArrayInputStream(bytes), "mem.tar", limits, null)
    val samples = try r.asScala.toSeq finally r.close()
    assert(TarShardReader.countSamples(new ByteArrayInputStream(bytes), "mem.tar") == samples.size,
      "counting and reading agree")
    samples
  }

  /** The AppleDouble header macOS writes (magic 0x00051607, version 2), then filler. */
  private val appleDouble = Array[Byte](0, 5, 22, 7, 0, 2, 0, 0) ++ ascii("Mac OS X        ") ++ new Array[Byte](60)

  private def image(i: Int) = Array[Byte](1, i.toByte)

  test("macOS AppleDouble members, __MACOSX/ and WebDataset's __…__ metadata belong to no sample") {
    // what tar on a Mac writes for files with extended attributes: ._NAME before each NAME
    val members = (0 until 3).flatMap { i =>
      Seq(s"./._k$i.jpg" -> appleDouble, s"./k$i.jpg" -> image(i), s"./._k$i.cls" -> appleDouble,
        s"./k$i.cls" -> ascii(i.toString))
    } ++ Seq("__MACOSX/._k0.jpg" -> appleDouble, "__MACOSX/sub/k9.jpg" -> image(9),
      "__meta__" -> ascii("{}"), "__index__/k0.json" -> ascii("{}"), ".DS_Store" -> appleDouble,
      "d/.hidden.jpg" -> image(8), "k3.jpg" -> image(3), "k3.cls" -> ascii("3"))
    val samples = read(TestFiles.tarBytes(members))
    assert(samples.map(_.key) == Seq("./k0", "./k1", "./k2", "k3"))
    assert(samples.forall(_.usable), samples.map(_.problem))
    assert(samples.map(_.label.intValue) == Seq(0, 1, 2, 3))
    assert(samples.map(_.image.toSeq) == (0 to 3).map(image(_).toSeq))
  }

  test("a concatenated tar (cat a.tar b.tar) is read whole, as GNU tar --ignore-zeros reads it") {
    TestFiles.withTempDir("concat") { dir =>
      val src = Files.createDirectories(dir.resolve("src"))
      for (i <- 0 until 4) {
        Files.write(src.resolve(s"k$i.jpg"), image(i))
        Files.write(src.resolve(s"k$i.cls"), ascii(i.toString))
      }
      for ((name, keys) <- Seq("a" -> Seq(0, 1), "b" -> Seq(2, 3))) {
        val cmd = Seq("tar", "--format=gnu", "-cf", dir.resolve(s"$name.tar").toString, "-C",
          src.toString) ++ keys.flatMap(k => Seq(s"k$k.jpg", s"k$k.cls"))
        assert(cmd.! == 0, s"tar failed: $cmd")
      }
      val a = Files.readAllBytes(dir.resolve("a.tar"))
      assert(a.length == 10240, "GNU tar pads its archive with zeros to a 10 KiB record")
      val cat = a ++ Files.readAllBytes(dir.resolve("b.tar"))
      Files.write(dir.resolve("c.tar"), cat)
      val gnu = Seq("tar", "--ignore-zeros", "-tf", dir.resolve("c.tar").toString).!!.linesIterator.toSeq
      assert(gnu == (0 until 4).flatMap(k => Seq(s"k$k.jpg", s"k$k.cls")))
      val samples = read(cat)
      assert(samples.map(_.key) == Seq("k0", "k1", "k2", "k3"))
      assert(samples.forall(_.usable) && samples.map(_.label.intValue) == Seq(0, 1, 2, 3))
      assert(samples.map(_.position) == Seq(0L, 1L, 2L, 3L))
      assert(read(cat ++ new Array[Byte](300)).size == 4, "zeros after the end, even a part block, end it")
    }
  }

  test("data after an end-of-archive block that is no archive is the shard's damage, never dropped unseen") {
    val a = TestFiles.tarBytes(Seq("k0.jpg" -> image(0), "k0.cls" -> ascii("0")))
    val garbage = Array.tabulate[Byte](1536)(i => (i * 7 + 1).toByte)
    val samples = read(a ++ garbage)
    assert(samples.map(_.key) == Seq("k0", "(rest of shard)"))
    assert(samples.head.usable)
    assert(samples(1).problem.startsWith("shard damaged; nothing after this point can be read: checksum"), samples(1).problem)
    assert(samples(1).problem.endsWith(s"(tar header at byte ${a.length} of mem.tar)"), samples(1).problem)
    val tail = read(a ++ Array[Byte](0, 0, 7))
    assert(tail.map(_.key) == Seq("k0", "(rest of shard)"))
    assert(tail(1).problem.contains("the archive ends inside a header (3 of 512 bytes)"), tail(1).problem)
  }

  test(".cls and .label entries that disagree quarantine the sample, naming both; equal ones are fine") {
    val samples = read(TestFiles.tarBytes(Seq(
      "k0.jpg" -> image(0), "k0.cls" -> ascii("3"), "k0.label" -> ascii("3\n"),
      "k1.jpg" -> image(1), "k1.cls" -> ascii("3"), "k1.label" -> ascii("5"),
      "k2.label" -> ascii("7"), "k2.jpg" -> image(2), "k2.cls" -> ascii("007"),
      "k3.jpg" -> image(3), "k3.cls" -> ascii("1"), "k3.label" -> ascii("one"),
      "k4.jpg" -> image(4), "k4.label" -> ascii("4"))))
    assert(samples.map(_.key) == Seq("k0", "k1", "k2", "k3", "k4"))
    assert(samples(0).usable && samples(0).label == 3)
    assert(samples(1).problem == "label entries disagree: label '3' in k1.cls, label '5' in k1.label (key 'k1')")
    assert(samples(2).usable && samples(2).label == 7, String.valueOf(samples(2).problem))
    assert(samples(3).problem ==
      "label 'one' in k3.label is not a plain decimal number (ASCII digits 0-9 only, no sign)")
    assert(samples(4).usable && samples(4).label == 4)
  }

  test("a tar of only members that belong to no sample counts none, as it reads none") {
    val bytes = TarBlocks.tar(TarBlocks.file("._k0.jpg", appleDouble), TarBlocks.file("__MACOSX/._k0.jpg", appleDouble))
    assert(read(bytes).isEmpty)
  }

  test("which names belong to a sample: the byte check before the patterns gives the patterns' answer") {
    // WebDataset's rules as regular expressions over the escaped text (what isSampleMember ran on
    // every member before it looked for "__" in the bytes first)
    val skipMeta = java.util.regex.Pattern.compile("__[^/]*__($|/)")
    val macosx = java.util.regex.Pattern.compile("(^|/)__MACOSX/")
    def reference(name: Array[Byte]): Boolean = {
      val file = name.drop(name.lastIndexOf('/'.toByte) + 1)
      val text = EscapedUtf8.text(name)
      !(file.nonEmpty && file(0) == '.') && !skipMeta.matcher(text).lookingAt() &&
        !macosx.matcher(text).find()
    }
    val pieces = Seq("_", "__", "/", ".", "k", "jpg", "__MACOSX/", "__meta__", "\\", "é", "MACOSX")
      .map(_.getBytes("UTF-8")) ++ Seq(Array[Byte](0xff.toByte), Array[Byte](0xc3.toByte))
    val rnd = new scala.util.Random(7)
    val names = Seq("k0.jpg", "__meta__", "__index__/k0.json", "__MACOSX/k.jpg", "a/__MACOSX/k.jpg",
      "a__MACOSX/k.jpg", "k__0.jpg", "_k_.jpg", "__a/b__", "d/.k.jpg").map(_.getBytes("UTF-8")) ++
      Seq.fill(20000)(Array.concat(Seq.fill(1 + rnd.nextInt(6))(pieces(rnd.nextInt(pieces.size))): _*))
    val members = names.count(WebDatasetKeys.isSampleMember)
    for (n <- names) {
      assert(WebDatasetKeys.isSampleMember(n) == reference(n), EscapedUtf8.text(n))
    }
    assert(members > 1000 && members < names.size - 1000, s"$members of ${names.size}: both answers met")
  }
}
