package dev.spindle.spark.feed

import java.awt.image.BufferedImage
import java.io.ByteArrayOutputStream
import java.nio.file.{Files, Path}
import java.util.{Map => JMap}

import scala.jdk.CollectionConverters._

import dev.spindle.Report
import dev.spindle.spark.plan.{Digest, EpochPlan, PlanSpec, Remainder}
import dev.spindle.spark.manifest.{Manifest, ShardCatalog}
import dev.spindle.spark.shard.ParquetColumns
import dev.spindle.spark.testkit.{BadImages, ParquetInputs, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import javax.imageio.ImageIO
import org.apache.hadoop.conf.Configuration

/** Small tar datasets for feed tests, and the plan-side expectations a run is compared with. */
object FeedData {
  /** A small PNG whose pixels depend on `seed`. */
  def png(seed: Int, w: Int = 20, h: Int = 16): Array[Byte] = {
    val img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB)
    for (y <- 0 until h; x <- 0 until w) img.setRGB(x, y, (seed * 7919 + x * 4099 + y * 131) & 0xffffff)
    val out = new ByteArrayOutputStream()
    ImageIO.write(img, "png", out)
    out.toByteArray
  }

  /**
   * Writes `shard-NNN.tar` files, shard `i` holding `counts(i)` samples `sI_J` (PNG + .cls);
   * the samples named in `bad` get undecodable image bytes instead.
   */
  def tars(dir: Path, counts: Seq[Int], bad: Set[(Int, Int)] = Set.empty): Path = {
    Files.createDirectories(dir)
    counts.zipWithIndex.foreach { case (n, s) =>
      val entries = (0 until n).flatMap { j =>
        val image = if (bad((s, j))) BadImages.garbage(200) else png(s * 1000 + j)
        Seq(f"s${s}_$j%04d.png" -> image, f"s${s}_$j%04d.cls" -> ascii((j % 10).toString))
      }
      TestFiles.writeTar(dir.resolve(f"shard-$s%03d.tar"), entries)
    }
    dir
  }

  /** The samples `tars` writes, as Parquet rows: shard `i` holds `counts(i)` rows. */
  def rows(counts: Seq[Int], bad: Set[(Int, Int)] = Set.empty): Seq[Seq[ParquetInputs.Sample]] =
    counts.zipWithIndex.map { case (n, s) =>
      (0 until n).map { j =>
        val image = if (bad((s, j))) BadImages.garbage(200) else png(s * 1000 + j)
        ParquetInputs.Sample(image, Int.box(j % 10), f"s${s}_$j%04d.png")
      }
    }

  /** The manifest the catalog builds for `dir` (counting on the calling thread). */
  def manifest(dir: Path): Manifest = manifestOf(dir.toString)

  /** The manifest the catalog builds for an input (counting on the calling thread). */
  def manifestOf(input: String, columns: ParquetColumns = ParquetColumns.DEFAULT): Manifest =
    new ShardCatalog(new Configuration(), 1000, columns).list(input,
      ShardCatalog.Counter.onThisThread(new Configuration()))

  /** Per rank, the digest of the whole epoch as the plan defines it. */
  def planDigests(m: Manifest, spec: PlanSpec): Seq[String] =
    EpochPlan.create(m, spec).ranks().asScala.map(_.digest()).toSeq

  def spec(seed: Long, epoch: Int, world: Int, batch: Int,
      remainder: Remainder = Remainder.DROP_LAST): PlanSpec =
    new PlanSpec(seed, epoch, world, batch, remainder, PlanSpec.DEFAULT_SHUFFLE_WINDOW)

  /** The report's rank entries, as Scala maps. */
  def ranks(report: Report): Seq[Map[String, AnyRef]] =
    report.get("ranks").asInstanceOf[java.util.List[JMap[String, AnyRef]]].asScala.map(_.asScala.toMap).toSeq

  /** Digests of one epoch by rank. */
  def digests(report: Report, epoch: Int): Seq[String] =
    ranks(report).filter(_("epoch") == epoch).sortBy(_("rank").asInstanceOf[Int]).map(_("digest").toString)

  def quarantine(report: Report): Seq[Map[String, AnyRef]] =
    report.get("quarantine").asInstanceOf[java.util.List[JMap[String, AnyRef]]].asScala.map(_.asScala.toMap).toSeq

  def digestOf(indices: Array[Long]): String = Digest.of(indices)
}
