package dev.spindle.spark.preprocess
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.sys.process._

import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The preprocess job on real photographs (Debian's mate-backgrounds) writes the pixels that
 * torchvision's Resize + CenterCrop give on PIL-decoded images: a reference nobody here wrote.
 */
class RealPhotoPreprocessSuite extends AnyFunSuite with SparkFixture {
  private val photos = Path.of("/usr/share/backgrounds/mate")
  private val size = 160

  private def requireOrCancel(ok: Boolean, what: String): Unit =
    if (!ok) {
      val msg = s"$what missing (bin/setup-test-deps installs it)"
      if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
    }

  test("preprocess of a folder of real photographs matches torchvision within one 8-bit step") {
    requireOrCancel(Files.isDirectory(photos.resolve("nature")), "mate-backgrounds")
    requireOrCancel(Seq("/usr/bin/python3", "-c", "import torchvision, PIL").! == 0, "python3-torchvision")
    TestFiles.withTempDir("photos") { dir =>
      // A class-per-folder tree of real photos: nature/*.jpg and one large one from abstract/.
      val picked = Files.list(photos.resolve("nature")).iterator().asScala
        .filter(_.toString.endsWith(".jpg")).toSeq.sorted.take(6) :+ photos.resolve("abstract/Elephants.jpg")
      val tree = dir.resolve("in")
      picked.foreach { p =>
        val cls = p.getParent.getFileName.toString
        Files.createDirectories(tree.resolve(cls))
        Files.copy(p, tree.resolve(cls).resolve(p.getFileName))
      }
      val out = dir.resolve("out")
      val report = PreprocessJob.run(spark, tree.toString, out.toString, false,
        Map("spark.spindle.image.size" -> size.toString, "spark.spindle.batchSize" -> "4").asJava)
      assert(report.get("images") == picked.size.toLong)

      val rows = ArrowFiles.readAll(out)
      val files = rows.map(r => tree.resolve(r.key))
      val ref = Files.createDirectories(dir.resolve("ref"))
      val cmd = Seq("/usr/bin/python3", "src/test/python/torchvision_reference.py", size.toString, ref.toString) ++
        files.map(_.toString)
      assert(cmd.! == 0, "reference script failed")
      var sumDiff = 0L
      var count = 0L
      rows.zipWithIndex.foreach { case (row, i) =>
        val expected = Files.readAllBytes(ref.resolve(s"$i.rgb"))
        assert(expected.length == row.image.size, row.key)
        val diffs = row.image.zip(expected).map { case (a, b) => math.abs((a & 0xff) - (b & 0xff)) }
        assert(diffs.max <= 1, s"${row.key}: max |diff| ${diffs.max}")
        sumDiff += diffs.sum
        count += diffs.size
      }
      val line = f"mean absolute difference vs torchvision over ${rows.size} photos: ${sumDiff.toDouble / count}%.4f"
      info(line)
      println("RealPhotoPreprocessSuite: " + line)
    }
  }
}
