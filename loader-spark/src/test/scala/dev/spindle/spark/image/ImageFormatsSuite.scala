package dev.spindle.spark.image

import java.io.File
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import ImageTestSupport._

/**
 * BMP, PNM, TIFF, WebP and GIF (and PNG's eXIf orientation) against torchvision's loader, live:
 * every variant of src/test/resources/formats (make_format_variants.py) goes through Spindle's
 * transform and through src/test/python/spindle_reference.py (Pillow 9.4 + torchvision 0.14) and
 * the outputs are compared byte for byte, as variants.tsv expects; lossy WebPs of the real
 * photographs likewise. Without the Python side the comparisons fail under CI=true and are
 * cancelled, visibly, elsewhere; the refusals are checked either way.
 */
class ImageFormatsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val python = sys.env.getOrElse("SPINDLE_TEST_PYTHON", "/usr/bin/python3")
  private val script = new File("src/test/python/spindle_reference.py").getAbsoluteFile
  private lazy val dir = new File(getClass.getResource("/formats/variants.tsv").toURI).getParentFile

  private case class Variant(file: File, expect: String, detail: String) {
    def name: String = file.getName
    def bytes: Array[Byte] = Files.readAllBytes(file.toPath)
  }

  private lazy val variants: Seq[Variant] =
    scala.io.Source.fromFile(new File(dir, "variants.tsv")).getLines()
      .filterNot(_.startsWith("#")).filter(_.nonEmpty).map { line =>
        val f = line.split("\t", -1)
        Variant(new File(dir, f(0)), f(1), f(2))
      }.toSeq

  private def expecting(e: String*): Seq[Variant] = variants.filter(v => e.contains(v.expect))

  /** Every image fits 40 x 40, so the first case compares every decoded pixel (and the padding). */
  private val cases = Seq(
    OutputMode.UINT8_HWC -> "center_crop(40)",
    OutputMode.UINT8_HWC -> "resize(16),center_crop(16)",
    OutputMode.FLOAT32_CHW -> "resize(24,20),normalize")

  private val tmp = Files.createTempDirectory("spindle-formats").toFile

  override def afterAll(): Unit = {
    def delete(f: File): Unit = {
      Option(f.listFiles()).toSeq.flatten.foreach(delete)
      f.delete()
    }
    delete(tmp)
  }

  private lazy val unavailable: Option[String] = {
    if (!new File(python).canExecute) Some(s"$python not found")
    else {
      val p = new ProcessBuilder(python, "-c", "import torch, torchvision, PIL, numpy")
        .redirectErrorStream(true).start()
      val out = new String(p.getInputStream.readAllBytes())
      if (!p.waitFor(300, TimeUnit.SECONDS)) { p.destroyForcibly(); Some("python timed out") }
      else if (p.exitValue() != 0) Some(out.trim.linesIterator.toSeq.lastOption.getOrElse("?"))
      else None
    }
  }

  /** Shown by ScalaTest reporters and in Surefire's console output. */
  private def report(line: String): Unit = {
    info(line)
    println(s"[ImageFormatsSuite] $line")
  }

  private def requireReference(): Unit = unavailable.foreach { why =>
    val msg = s"torchvision reference unavailable ($why): apt-get install -y python3-torch " +
      "python3-torchvision python3-pil python3-numpy"
    if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
  }

  /** Runs spindle_reference.py once on `images` for `specs`; the folder of its outputs. */
  private def reference(name: String, specs: Seq[(OutputMode, String)], exif: Boolean,
      images: Seq[File]): File = {
    requireReference()
    val out = new File(tmp, name)
    val cmd = Seq(python, script.getPath) ++ specs.flatMap { case (m, s) =>
      Seq("--case", s"${m.specName()} $s") } ++ (if (exif) Seq("--exif") else Nil) ++
      Seq(out.getPath) ++ images.map(_.getPath)
    val p = new ProcessBuilder(cmd: _*).redirectErrorStream(true).start()
    val log = new String(p.getInputStream.readAllBytes())
    assert(p.waitFor(600, TimeUnit.SECONDS) && p.exitValue() == 0, s"reference failed: $log")
    out
  }

  private lazy val plain = reference("plain", cases, exif = false, expecting("exact", "within1")
    .map(_.file))
  private lazy val exifTurned = reference("exif", cases, exif = true,
    variants.filter(v => v.name.contains("exif") && v.expect == "exact").map(_.file))

  private def theirs(run: File, caseIndex: Int, file: File): Array[Byte] =
    Files.readAllBytes(new File(new File(run, caseIndex.toString), file.getName + ".ref").toPath)

  private def transform(i: Int, exif: Boolean): ImageTransform =
    ImageTransform.parse(cases(i)._2).withOutput(cases(i)._1).withExifOrientation(exif)

  /** Spindle's output for every case and resample path equals the reference's, byte for byte. */
  private def assertExact(v: Variant, run: File, exif: Boolean): Unit =
    for (i <- cases.indices; vector <- paths) {
      val ours = applyWith(transform(i, exif), v.bytes, vector)
      val ref = theirs(run, i, v.file)
      assert(java.util.Arrays.equals(ours, ref), s"${v.name} ${cases(i)._2} exif=$exif " +
        s"(${describe(vector, nativeJpeg = false)}): ${firstDifference(ours, ref)}")
    }

  test("the variants cover every format and expectation") {
    val formats = variants.map(v => ImageFormat.sniff(v.bytes, 0, v.bytes.length))
    assert(ImageFormat.values().toSet -- formats.toSet == Set(ImageFormat.JPEG))
    assert(variants.map(_.expect).toSet == Set("exact", "within1", "decodes", "refused"))
    assert(expecting("exact").size >= 100)
  }

  test("every variant decodes to torchvision's bytes, EXIF orientation off") {
    for (v <- expecting("exact")) assertExact(v, plain, exif = false)
  }

  test("every variant without EXIF decodes to torchvision's bytes with orientation on too") {
    // a TIFF's Orientation tag is applied when decoding, as Pillow applies it on load, whatever
    // the setting: the tiff-orientation* files are turned upright here as in torchvision's loader
    for (v <- expecting("exact") if !v.name.contains("exif")) assertExact(v, plain, exif = true)
    val turned = variants.find(_.name == "tiff-orientation6.tif").get
    val info = ImageInfo.probe(turned.bytes, 0, turned.bytes.length)
    assert((info.width(), info.height()) == (37, 23), "the stored size")
    assert(applyTo(ImageTransform.parse("crop(0,0,37,23)"), turned.bytes).length == 37 * 23 * 3)
  }

  test("PNG eXIf, WebP EXIF: each orientation turned as ImageOps.exif_transpose turns it") {
    val turned = variants.filter(v => v.name.contains("exif") && v.expect == "exact")
    assert(turned.count(_.name.startsWith("png-exif")) == 9) // 1 to 8, and one after the IDAT
    assert(turned.count(_.name.startsWith("webp-exif")) == 3)
    for (v <- turned) assertExact(v, exifTurned, exif = true)
    for (o <- 2 to 8) { // the orientation was read, not merely tolerated
      val png = variants.find(_.name == s"png-exif$o.png").get.bytes
      val t = transform(0, exif = true)
      assert(!java.util.Arrays.equals(applyTo(t, png), applyTo(t.withExifOrientation(false), png)),
        s"png-exif$o.png")
    }
  }

  test("a CMYK TIFF decodes within one 8-bit step of Pillow's conversion") {
    for (v <- expecting("within1"); vector <- paths) {
      val ours = applyWith(transform(0, exif = false), v.bytes, vector)
      val ref = theirs(plain, 0, v.file)
      val worst = ours.indices.map(i => math.abs((ours(i) & 0xff) - (ref(i) & 0xff))).max
      report(s"${v.name}: at most $worst steps from Pillow (${describe(vector, false)})")
      assert(worst <= 1, v.name)
    }
  }

  test("variants Pillow reads otherwise (its bugs, malformed files) still decode") {
    for (v <- expecting("decodes")) assert(applyTo(transform(1, exif = true), v.bytes).length ==
      16 * 16 * 3, v.name)
  }

  test("variants OpenCV cannot decode as Pillow does are refused, naming why") {
    for (v <- expecting("refused")) {
      val e = intercept[ImageException](applyTo(transform(1, exif = true), v.bytes))
      assert(e.getMessage.startsWith(v.detail), s"${v.name}: ${e.getMessage}")
    }
  }

  test("lossy WebPs of the photographs decode as Pillow decodes them (both libwebp)") {
    requireReference()
    val photos = new File(getClass.getResource("/photos").toURI).listFiles()
      .filter(_.getName.endsWith(".jpg")).sortBy(_.getName).toSeq
    val webp = new File(tmp, "webp")
    webp.mkdirs()
    val encode = "import sys\nfrom PIL import Image\nfor q, p in zip(sys.argv[2::2], sys.argv[3::2]):\n" +
      "    Image.open(p).convert('RGB').save(sys.argv[1] + '/' + p.split('/')[-1][:-4] + '-q' + q" +
      " + '.webp', quality=int(q))\n"
    val args = photos.flatMap(p => Seq("85", p.getPath, "40", p.getPath))
    val p = new ProcessBuilder((Seq(python, "-c", encode, webp.getPath) ++ args): _*)
      .redirectErrorStream(true).start()
    val log = new String(p.getInputStream.readAllBytes())
    assert(p.waitFor(300, TimeUnit.SECONDS) && p.exitValue() == 0, log)
    val files = webp.listFiles().sortBy(_.getName).toSeq
    assert(files.size == 2 * photos.size)
    val specs = Seq(OutputMode.UINT8_HWC -> "center_crop(408,640)",
      OutputMode.UINT8_HWC -> "resize(256),center_crop(224)")
    val run = reference("webp-photos", specs, exif = false, files)
    for (f <- files; (spec, i) <- specs.zipWithIndex; vector <- paths) {
      val t = ImageTransform.parse(spec._2).withOutput(spec._1)
      val ours = applyWith(t, Files.readAllBytes(f.toPath), vector)
      val ref = theirs(run, i, f)
      assert(java.util.Arrays.equals(ours, ref), s"${f.getName} ${spec._2}: " +
        firstDifference(ours, ref))
    }
    report(s"${files.size} lossy WebPs (quality 85 and 40) of 640x408 photographs: identical " +
      "pixels to Pillow's decode")
  }
}
