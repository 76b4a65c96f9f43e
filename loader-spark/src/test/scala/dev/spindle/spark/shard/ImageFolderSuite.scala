package dev.spindle.spark.shard

import java.io.{File, IOException}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.manifest.ShardCatalog

/**
 * An image folder tree gives torchvision's `ImageFolder` classes, labels and samples: the same
 * tree, made of real images (PIL's encoders), is read by Debian's torchvision 0.14
 * (src/test/python/imagefolder_reference.py) and by Spindle, and the two are compared. Files that
 * are no samples are listed, with their reason, in the catalog's `skipped` and the report's
 * `input_skipped`. Without the Python side the suite fails under CI=true and is cancelled, visibly,
 * elsewhere.
 */
class ImageFolderSuite extends AnyFunSuite with SparkFixture {
  private val python = sys.env.getOrElse("SPINDLE_TEST_PYTHON", "/usr/bin/python3")
  private val script = new File("src/test/python/imagefolder_reference.py").getAbsoluteFile
  private val json = new ObjectMapper()
  private val conf = new Configuration()
  private val unicodeNames = System.getProperty("sun.jnu.encoding", "").equalsIgnoreCase("UTF-8")

  /** A file of the tree: an image PIL writes in `format` (and `mode`), or other bytes. */
  private case class Item(path: String, format: String = null, mode: String = null, text: String = null)

  private def image(path: String, format: String, mode: String = null) = Item(path, format, mode)
  private def other(path: String, text: String = "not an image") = Item(path, text = text)

  private lazy val unavailable: Option[String] = {
    if (!new File(python).canExecute) Some(s"$python not found")
    else {
      val (code, out) = run(Seq(python, "-c", "import torchvision, PIL"))
      if (code == 0) None else Some(out.trim.linesIterator.toSeq.lastOption.getOrElse("import failed"))
    }
  }

  private def requirePython(): Unit = unavailable.foreach { why =>
    val msg = s"torchvision reference unavailable ($why): apt-get install -y python3-torchvision python3-pil"
    if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
  }

  private def run(cmd: Seq[String]): (Int, String) = {
    val p = new ProcessBuilder(cmd: _*).redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes(), UTF_8)
    assert(p.waitFor(300, TimeUnit.SECONDS), s"${cmd.mkString(" ")} timed out")
    (p.exitValue(), out)
  }

  private def reference(args: String*): String = {
    requirePython()
    val (code, out) = run(Seq(python, script.getPath) ++ args)
    assert(code == 0, s"reference failed: $out")
    out
  }

  /** Writes `items` under `root` with PIL (images) or as text. */
  private def make(root: Path, items: Seq[Item]): Path = {
    val spec = items.map { i =>
      val m = new java.util.LinkedHashMap[String, String]()
      m.put("path", i.path)
      if (i.format != null) m.put("format", i.format) else m.put("bytes", i.text)
      if (i.mode != null) m.put("mode", i.mode)
      m
    }.asJava
    val specFile = Files.createTempFile("imagefolder-spec", ".json")
    try {
      Files.writeString(specFile, json.writeValueAsString(spec))
      reference("make", root.toString, specFile.toString)
    } finally Files.delete(specFile)
    root
  }

  private def torchvision(root: Path): JsonNode = json.readTree(reference("read", root.toString))

  private def list(root: Path): (Manifest, Seq[InputListing.Skipped]) = {
    val catalog = new ShardCatalog(conf, 4)
    (catalog.list(root.toString, ShardCatalog.Counter.onThisThread(conf)), catalog.skipped.asScala.toSeq)
  }

  private def relative(root: Path, path: String): String = {
    val p = if (path.startsWith("file:")) Path.of(new java.net.URI(path)) else Path.of(path)
    root.relativize(p).toString
  }

  /** The mixed tree: every extension torchvision takes, and files it does not. */
  private val mixed: Seq[Item] = Seq(
    image("cat/a.jpg", "JPEG"), image("cat/b.webp", "WEBP"), image("cat/c.bmp", "BMP"),
    image("cat/d.gif", "GIF"), other("cat/e.txt"), image("cat/sub/deeper/f.jpeg", "JPEG"),
    image("cat/sub/g.png", "PNG"), image("cat/.hidden.png", "PNG"), other("cat/.DS_Store"),
    image("dog/h.tif", "TIFF"), image("dog/i.TIFF", "TIFF"), image("dog/j.ppm", "PPM"),
    image("dog/k.pgm", "PPM", "L"), image("dog/l.JPG", "JPEG"), image("dog/m.gif", "GIF"),
    image("Zebra/n.png", "PNG"), image("_extra/o.webp", "WEBP"), other("_extra/p.txt"),
    image("top.jpg", "JPEG"), other("README.txt"), other("_notes.txt")) ++
    (if (unicodeNames) Seq(image("\uff5aoo/q.png", "PNG"), image("\ud835\udcb3/r.bmp", "BMP")) else Nil)

  private val InRoot = "a file directly in the root folder, outside any class folder (ImageFolder" +
    " reads only files inside class folders ROOT/<class>/…)"

  /** What Spindle lists as skipped in the mixed tree, relative path -> reason. */
  private val mixedSkipped = Map(
    "cat/d.gif" -> FolderImages.NOT_AN_IMAGE, "cat/e.txt" -> FolderImages.NOT_AN_IMAGE,
    "cat/.DS_Store" -> FolderImages.NOT_AN_IMAGE, "dog/m.gif" -> FolderImages.NOT_AN_IMAGE,
    "_extra/p.txt" -> FolderImages.NOT_AN_IMAGE,
    "top.jpg" -> InRoot, "README.txt" -> InRoot)

  test("an image folder's classes, labels and samples are torchvision ImageFolder's on a mixed tree") {
    TestFiles.withTempDir("imagefolder") { dir =>
      val root = make(dir.resolve("in"), mixed)
      val tv = torchvision(root)
      val classes = tv.get("classes").elements().asScala.map(_.asText).toSeq
      val samples = tv.get("samples").elements().asScala.map(s => s.get(0).asText -> s.get(1).asInt).toSeq
      assert(classes.take(3) == Seq("Zebra", "_extra", "cat"), "the tree tests Python's order")
      assert(samples.size == 13 + (if (unicodeNames) 2 else 0), samples)

      val (m, skipped) = list(root)
      assert(m.classNames.asScala == classes)
      classes.zipWithIndex.foreach { case (c, i) => assert(tv.get("class_to_idx").get(c).asInt == i) }
      val entries = m.shards.asScala.flatMap(_.entries.asScala).map(e => e.path -> e.label).toSeq
      assert(entries == samples, "the same files, labels and order as torchvision")
      assert(m.totalSamples == samples.size)
      assert(skipped.map(k => relative(root, k.path) -> k.reason).toMap == mixedSkipped)
      // every file is a sample or listed, but Spindle's hidden side files in the root
      val files = Files.walk(root).iterator().asScala.filter(Files.isRegularFile(_)).map(root.relativize(_).toString).toSet
      assert(samples.map(_._1).toSet ++ mixedSkipped.keySet == files - "_notes.txt")
    }
  }

  test("preprocess of the mixed tree: every torchvision sample written or quarantined, the others listed") {
    TestFiles.withTempDir("imagefolder-job") { dir =>
      val root = make(dir.resolve("in"), mixed)
      val tv = torchvision(root)
      val samples = tv.get("samples").elements().asScala.map(s => s.get(0).asText -> s.get(1).asInt).toMap
      val report = PreprocessJob.run(spark, root.toString, dir.resolve("out").toString, false, Map(
        "spark.spindle.image.size" -> "8", "spark.spindle.batchSize" -> "4",
        "spark.spindle.maxFailures" -> "20").asJava)
      val quarantined = report.get("quarantine").asInstanceOf[java.util.List[java.util.Map[String, Object]]]
        .asScala.map(q => q.get("key").toString -> q.get("reason").toString).toMap
      val rows = ArrowFiles.readAll(dir.resolve("out"))
      assert(rows.map(_.key).toSet ++ quarantined.keySet == samples.keySet, "each sample written or listed")
      assert(rows.forall(r => r.label == samples(r.key)), "written with torchvision's label")
      assert(rows.map(_.key).toSet.intersect(quarantined.keySet).isEmpty)
      assert(report.get("images") == rows.size.toLong)
      // a sample the decoder cannot read is quarantined with its reason, never dropped
      quarantined.foreach { case (k, why) => assert(why.contains(k.substring(k.lastIndexOf('/') + 1)), why) }
      assert(rows.exists(_.key == "cat/a.jpg") && rows.exists(_.key == "Zebra/n.png"))
      val listed = report.get("input_skipped").asInstanceOf[java.util.List[java.util.Map[String, String]]]
        .asScala.map(k => relative(root, k.get("path")) -> k.get("reason")).toMap
      assert(listed == mixedSkipped)
      assert(report.get("input_skipped_total") == mixedSkipped.size)
      val written = dev.spindle.spark.metrics.JobReport.read(dir.resolve("out/_manifest.json"))
      assert(written.get("class_names").asInstanceOf[java.util.List[String]].asScala ==
        tv.get("classes").elements().asScala.map(_.asText).toSeq, "the output's class_names are torchvision's classes")
    }
  }

  test("a class folder with no image is refused before any task, naming it, as torchvision refuses it") {
    TestFiles.withTempDir("imagefolder-empty") { dir =>
      val root = make(dir.resolve("in"), Seq(image("a/x.jpg", "JPEG"), image("b/only.gif", "GIF"),
        other("b/notes.txt"), image("d/y.png", "PNG")))
      Files.createDirectories(root.resolve("c"))
      val tv = torchvision(root)
      assert(tv.get("error").asText == "FileNotFoundError")
      assert(tv.get("message").asText.startsWith("Found no valid file for the classes b, c. Supported" +
        " extensions are: .jpg, .jpeg, .png, .ppm, .bmp, .pgm, .tif, .tiff, .webp"), tv)
      val e = intercept[IOException](list(root))
      assert(e.getMessage.startsWith(s"Found no valid file for the classes b, c of the image folder $root." +
        " Supported extensions are: .jpg, .jpeg, .png, .ppm, .bmp, .pgm, .tif, .tiff, .webp."), e.getMessage)
      assert(e.getMessage.contains("\n  b: 2 files, none an image: b/notes.txt, b/only.gif"), e.getMessage)
      assert(e.getMessage.contains("\n  c: no file"), e.getMessage)
      val out = dir.resolve("out")
      val job = intercept[IOException](PreprocessJob.run(spark, root.toString, out.toString, false,
        Map("spark.spindle.image.size" -> "8").asJava))
      assert(job.getMessage.startsWith("Found no valid file for the classes b, c"), job.getMessage)
      assert(!Files.exists(out.resolve("_manifest.json")))
    }
  }

  test("a tree without class folders is refused, as torchvision refuses it") {
    TestFiles.withTempDir("imagefolder-flat") { dir =>
      val root = make(dir.resolve("in"), Seq(image("x.jpg", "JPEG"), image("y.png", "PNG")))
      assert(torchvision(root).get("message").asText.startsWith("Couldn't find any class folder in"))
      val e = intercept[IOException](list(root))
      assert(e.getMessage.startsWith(s"Couldn't find any class folder in $root"), e.getMessage)
    }
  }

  test("macOS AppleDouble files and __MACOSX are listed as skipped, never samples nor classes") {
    TestFiles.withTempDir("imagefolder-mac") { dir =>
      val root = make(dir.resolve("in"), Seq(image("cat/x.jpg", "JPEG"), image("dog/y.png", "PNG"),
        other("cat/._x.jpg", "\u0000\u0005\u0016\u0007Mac OS X"), other("__MACOSX/cat/._x.jpg"),
        other("__MACOSX/dog/._y.png"), other("dog/__MACOSX/._y.png")))
      val (m, skipped) = list(root)
      assert(m.classNames.asScala == Seq("cat", "dog"))
      assert(m.shards.asScala.flatMap(_.entries.asScala).map(e => e.path -> e.label) ==
        Seq("cat/x.jpg" -> 0, "dog/y.png" -> 1))
      assert(skipped.map(k => relative(root, k.path) -> k.reason).toMap == Map(
        "cat/._x.jpg" -> "macOS AppleDouble metadata (._*: a file's extended attributes), not an image",
        "__MACOSX" -> "macOS archive metadata (__MACOSX), no class and no image: 2 files not read",
        "dog/__MACOSX" -> "macOS archive metadata (__MACOSX), no class and no image: 1 file not read"))
    }
  }

  test("class folders are in Python's order of str (code points), not Java's (UTF-16 units)") {
    val names = Seq("b", "\ud835\udcb3", "\uff5a", "_a", ".x", "A", "a\u00e9", "ab", "a")
    val python = json.readTree(reference(Seq("sort") ++ names: _*)).elements().asScala.map(_.asText).toSeq
    assert(names.sorted(Ordering.comparatorToOrdering(FolderTree.PYTHON_ORDER)) == python)
    assert(names.sorted != python, "Java's own order differs, so the test can fail")
  }
}
