package dev.spindle.spark.plan

import java.util.{List => JList}

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.shard.{FolderEntry, ParquetColumns, Shard, ShardFormat}

import dev.spindle.spark.manifest.Manifest
/**
 * Random manifests of every kind the cache holds (tar folders, brace patterns of Parquet files,
 * image folders, single files), with names that test encodings: non-ASCII letters, combining
 * marks, characters outside the BMP (surrogate pairs, neighbours that share their high half), a
 * lone surrogate, URI-special characters, spaces; and extreme numbers.
 */
object RandomManifests {
  private val pieces = Seq("a", "train", "0", "00", "-", "_", ".", " ", "ü", "ñ", "日本", "e\u0301",
    "\u00a0", "😀", "😁", "𝄞", "\ud800", "%20", "#", "?", "+", "=", "'", "\"", "\\", "[x]", ",", "Ω",
    "/", "{", "}")
  private val numbers = Seq(0L, 1L, -1L, 127L, 128L, Long.MaxValue, Long.MinValue, 1700000000123L)

  private def name(rnd: Random, braces: Boolean = false): String = {
    val s = Seq.fill(1 + rnd.nextInt(5))(pieces(rnd.nextInt(pieces.size))).mkString
    val clean = if (braces) s else s.replace("{", "(").replace("}", ")")
    clean.replaceAll("/+", "/").stripPrefix("/").stripSuffix("/") match {
      case "" => "x"
      case n => n
    }
  }

  private def number(rnd: Random): Long =
    if (rnd.nextInt(4) == 0) numbers(rnd.nextInt(numbers.size)) else rnd.nextLong() >>> rnd.nextInt(64)

  /** Sorted names that share prefixes, as a data set's shard names do. */
  private def names(rnd: Random, n: Int, suffix: String): Seq[String] = {
    val stem = name(rnd)
    Seq.tabulate(n)(i => if (rnd.nextBoolean()) f"$stem-$i%05d$suffix" else stem + name(rnd) + suffix)
      .distinct.sorted
  }

  def manifest(rnd: Random): Manifest = rnd.nextInt(4) match {
    case 0 => files("file:/data/" + name(rnd), "", ShardFormat.TAR, ".tar", null, rnd)
    case 1 =>
      val columns = new ParquetColumns(name(rnd), "label-" + name(rnd))
      files("hdfs://nn/" + name(rnd), "/part-{0..9}" + name(rnd) + ".parquet", ShardFormat.PARQUET,
        ".parquet", columns, rnd)
    case 2 => folder(rnd)
    case _ =>
      val input = "s3a://bucket/" + name(rnd) + ".tar"
      new Manifest(input, JList.of(shard(input, ShardFormat.TAR, null, rnd)), JList.of())
  }

  private def shard(uri: String, format: ShardFormat, columns: ParquetColumns, rnd: Random,
      entries: JList[FolderEntry] = JList.of()): Shard = {
    val samples = if (rnd.nextInt(8) == 0) Long.MaxValue / 4 else rnd.nextInt(5000).toLong
    new Shard(uri, format, number(rnd), number(rnd), samples, entries, columns)
  }

  private def files(folder: String, pattern: String, format: ShardFormat, suffix: String,
      columns: ParquetColumns, rnd: Random): Manifest = {
    val shards = names(rnd, rnd.nextInt(30), suffix).map(n => shard(folder + "/" + n, format, columns, rnd))
    new Manifest(folder + pattern, shards.asJava, JList.of())
  }

  private def folder(rnd: Random): Manifest = {
    val root = "file:/images/" + name(rnd)
    val classes = Seq.fill(1 + rnd.nextInt(4))(name(rnd)).distinct.sorted
    val files = classes.zipWithIndex.flatMap { case (c, label) =>
      names(rnd, rnd.nextInt(12), ".jpg").map(f => new FolderEntry(c + "/" + f, label))
    }
    val runs = files.grouped(1 + rnd.nextInt(5)).toSeq
    val shards = runs.map(run => shard(root, ShardFormat.IMAGE_FOLDER, null, rnd, run.asJava))
    new Manifest(root, shards.asJava, classes.asJava)
  }
}
