package dev.spindle.spark.manifest
import java.io.IOException
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.testkit.TestFiles
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.shard.FolderImages
import dev.spindle.spark.shard.SampleLimits
import dev.spindle.spark.shard.ShardFormat
import dev.spindle.spark.shard.ShardReader

class ShardCatalogSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val localCounter = ShardCatalog.Counter.onThisThread(conf)

  private def catalog(files: Int = 1000) = new ShardCatalog(conf, files)

  private def image(dir: Path, rel: String): Unit = {
    val p = dir.resolve(rel)
    Files.createDirectories(p.getParent)
    Files.write(p, Array[Byte](1, 2, 3))
  }

  test("lists tar shards in path order with counted samples and ignores _ and . files") {
    TestFiles.withTempDir("cat") { dir =>
      TestFiles.writeTar(dir.resolve("b.tar"), Seq("k.jpg" -> Array[Byte](1), "k.cls" -> ascii("0")))
      TestFiles.writeTar(dir.resolve("a.tar"), Seq("x.jpg" -> Array[Byte](1), "x.cls" -> ascii("0"),
        "y.jpg" -> Array[Byte](1), "y.cls" -> ascii("1")))
      Files.write(dir.resolve("_manifest.json"), ascii("{}"))
      Files.write(dir.resolve(".hidden.tar"), ascii("junk"))
      val m = catalog().list(dir.toString, localCounter)
      assert(m.shards.asScala.map(s => Path.of(new java.net.URI(s.uri)).getFileName.toString) == Seq("a.tar", "b.tar"))
      assert(m.shards.asScala.map(_.samples) == Seq(2L, 1L))
      assert(m.totalSamples == 3)
      assert(m.shards.asScala.forall(_.format == ShardFormat.TAR))
    }
  }

  test("an image folder tree becomes runs of files with labels from sorted class names") {
    TestFiles.withTempDir("folder") { dir =>
      Seq("dog/2.jpg", "dog/1.png", "cat/a.jpg", "cat/b.JPG", "cat/c.jpeg").foreach(image(dir, _))
      Files.write(dir.resolve("cat/notes.txt"), ascii("not an image"))
      val c = catalog(files = 2)
      val m = c.list(dir.toString, localCounter)
      assert(c.skipped.asScala.map(k => k.path.substring(k.path.indexOf("/cat/") + 1) -> k.reason) ==
        Seq("cat/notes.txt" -> FolderImages.NOT_AN_IMAGE))
      assert(m.classNames.asScala == Seq("cat", "dog"))
      val entries = m.shards.asScala.flatMap(_.entries.asScala)
      assert(entries.map(_.path) == Seq("cat/a.jpg", "cat/b.JPG", "cat/c.jpeg", "dog/1.png", "dog/2.jpg"))
      assert(entries.map(_.label) == Seq(0, 0, 0, 1, 1))
      assert(m.shards.asScala.map(_.samples) == Seq(2L, 2L, 1L))
    }
  }

  test("an image folder takes torchvision's ImageFolder extensions, not only .jpg and .png") {
    TestFiles.withTempDir("folder-formats") { dir =>
      val files = Seq("bird/a.webp", "bird/b.BMP", "cat/c.tif", "cat/d.tiff", "dog/e.ppm",
        "dog/f.pgm", "dog/g.jpg")
      files.foreach(image(dir, _))
      image(dir, "dog/h.gif") // not one of ImageFolder's: left out, as torchvision leaves it
      val m = catalog().list(dir.toString, localCounter)
      assert(m.classNames.asScala == Seq("bird", "cat", "dog"))
      val entries = m.shards.asScala.flatMap(_.entries.asScala)
      assert(entries.map(_.path) == files)
      assert(entries.map(_.label) == Seq(0, 0, 1, 1, 2, 2, 2))
    }
  }

  test("images below a class folder's subfolders are its samples; files in the root are listed, not read") {
    TestFiles.withTempDir("layout") { dir =>
      image(dir, "a/b/deep.jpg")
      image(dir, "a/top.png")
      image(dir, "loose.jpg")
      val c = catalog()
      val m = c.list(dir.toString, localCounter)
      assert(m.classNames.asScala == Seq("a"))
      assert(m.shards.asScala.flatMap(_.entries.asScala).map(_.path) == Seq("a/top.png", "a/b/deep.jpg"))
      assert(c.skipped.asScala.map(k => k.path.substring(k.path.lastIndexOf('/') + 1) -> k.reason) ==
        Seq("loose.jpg" -> ("a file directly in the root folder, outside any class folder (ImageFolder" +
          " reads only files inside class folders ROOT/<class>/…)")))
    }
  }

  test("a path with no shards, or no path at all, is a clear error") {
    TestFiles.withTempDir("empty") { dir =>
      Files.write(dir.resolve("readme.txt"), ascii("hi"))
      val e = intercept[IOException](catalog().list(dir.toString, localCounter))
      assert(e.getMessage.startsWith("No shards under " + dir))
      val missing = intercept[IOException](catalog().list(dir.resolve("nope").toString, localCounter))
      assert(missing.getMessage.contains("Input does not exist"))
    }
  }

  test("invalid shard sizes are refused naming the key") {
    val e = intercept[IllegalArgumentException](catalog(files = 0))
    assert(e.getMessage.contains("spark.spindle.folderShardFiles: 0"))
  }

  test("the folder reader yields samples in manifest order and reports an unreadable file") {
    TestFiles.withTempDir("fr") { dir =>
      Seq("c/1.jpg", "c/2.jpg").foreach(image(dir, _))
      val m = catalog().list(dir.toString, localCounter)
      Files.delete(dir.resolve("c/2.jpg"))
      val reader = ShardReader.open(m.shards.get(0), conf, new SampleLimits(1 << 20, 0))
      val samples = reader.asScala.toSeq
      reader.close()
      assert(samples.map(_.key) == Seq("c/1.jpg", "c/2.jpg"))
      assert(samples(0).usable && samples(0).label == 0)
      assert(samples(1).problem.startsWith("cannot read file"))
    }
  }

  test("the folder reader holds class indices to spark.spindle.numClasses when it is set") {
    TestFiles.withTempDir("classes") { dir =>
      Seq("a/1.jpg", "b/1.jpg", "c/1.jpg").foreach(image(dir, _))
      val m = catalog().list(dir.toString, localCounter)
      val reader = ShardReader.open(m.shards.get(0), conf, new SampleLimits(1 << 20, 2))
      val samples = try reader.asScala.toSeq finally reader.close()
      assert(samples.map(s => Option(s.label).map(_.intValue)) == Seq(Some(0), Some(1), None))
      assert(samples(2).problem == "label 2 (class folder 'c') is not below spark.spindle.numClasses=2")
    }
  }

  private def shardNames(m: Manifest): Seq[String] =
    m.shards.asScala.map(s => s.uri.substring(s.uri.indexOf("/in/") + 4)).toSeq

  test("a link loop is followed once: each shard is listed once and the loop is reported") {
    TestFiles.withTempDir("loop") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      TestFiles.writeTar(in.resolve("a.tar"), Seq("x.jpg" -> Array[Byte](1), "x.cls" -> ascii("0")))
      Files.createDirectories(in.resolve("sub"))
      TestFiles.writeTar(in.resolve("sub/b.tar"), Seq("y.jpg" -> Array[Byte](1), "y.cls" -> ascii("0")))
      Files.createSymbolicLink(in.resolve("loop"), Path.of("."))
      Files.createSymbolicLink(in.resolve("sub/up"), Path.of(".."))
      val c = catalog()
      val m = c.list(in.toString, localCounter)
      assert(shardNames(m) == Seq("a.tar", "sub/b.tar"))
      assert(c.skipped.asScala.map(k => k.path.substring(k.path.indexOf("/in/") + 4) -> k.reason).toMap ==
        Map("loop" -> s"a link to a folder already listed ($in)",
          "sub/up" -> s"a link to a folder already listed ($in)"))
    }
  }

  test("links to the same shard or folder are taken once; broken links are reported") {
    TestFiles.withTempDir("links") { dir =>
      val elsewhere = Files.createDirectories(dir.resolve("elsewhere"))
      TestFiles.writeTar(elsewhere.resolve("e.tar"), Seq("z.jpg" -> Array[Byte](1), "z.cls" -> ascii("0")))
      val in = Files.createDirectories(dir.resolve("in"))
      TestFiles.writeTar(in.resolve("a.tar"), Seq("x.jpg" -> Array[Byte](1), "x.cls" -> ascii("0")))
      Files.createSymbolicLink(in.resolve("again.tar"), in.resolve("a.tar"))
      Files.createSymbolicLink(in.resolve("ext"), elsewhere)
      Files.createSymbolicLink(in.resolve("ext2"), elsewhere)
      Files.createSymbolicLink(in.resolve("gone.tar"), dir.resolve("missing.tar"))
      val c = catalog()
      val m = c.list(in.toString, localCounter)
      assert(shardNames(m) == Seq("a.tar", "ext/e.tar"))
      val reasons = c.skipped.asScala.map(k => k.path.substring(k.path.indexOf("/in/") + 4) -> k.reason).toMap
      assert(reasons == Map(
        "again.tar" -> s"the same file as $in/a.tar",
        "ext2" -> s"a link to a folder already listed ($in/ext)",
        "gone.tar" -> s"a broken link (to ${dir.resolve("missing.tar")})"))
    }
  }

  test("two link loops side by side are listed in bounded time") {
    TestFiles.withTempDir("loops") { dir =>
      val in = Files.createDirectories(dir.resolve("in"))
      TestFiles.writeTar(in.resolve("a.tar"), Seq("x.jpg" -> Array[Byte](1), "x.cls" -> ascii("0")))
      Files.createSymbolicLink(in.resolve("l1"), Path.of("."))
      Files.createSymbolicLink(in.resolve("l2"), Path.of("."))
      val m = catalog().list(in.toString, localCounter)
      assert(shardNames(m) == Seq("a.tar"))
    }
  }
}
