package dev.spindle.spark.testkit

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.example.SampleImages
import dev.spindle.spark.testkit.TestFiles.ascii

/**
 * An image–caption data set in WebDataset tars, for the examples of declared fields: sample `i`
 * (key `img-NNNNNN`) is a JPEG drawn from (seed, i), its class `i % 5` (`.cls`), a caption made
 * from its class and key (`.txt`), its caption's tokens (`.tok`, a JSON array of the words'
 * lengths) and a score (`.score`, `i / 4`).
 */
object CaptionData {
  val Seed = 11L
  val Classes = Seq("cat", "dog", "owl", "fox", "eel")

  def key(i: Int): String = f"img-$i%06d"
  def label(i: Int): Int = i % Classes.size
  def caption(i: Int): String = s"a photo of a ${Classes(label(i))}, sample ${key(i)}"
  def tokens(caption: String): Seq[Int] = caption.split(' ').toSeq.map(_.length)
  def score(i: Int): Float = i / 4f

  /** `shards` tars `captions-NNN.tar` of `perShard` samples each in `dir`; returns `dir`. */
  def write(dir: Path, shards: Int, perShard: Int): Path = {
    Files.createDirectories(dir)
    for (s <- 0 until shards) {
      val members = (s * perShard until (s + 1) * perShard).flatMap { i =>
        Seq(
          s"${key(i)}.jpg" -> SampleImages.jpeg(Seed, i, 48, 40),
          s"${key(i)}.cls" -> ascii(label(i).toString),
          s"${key(i)}.txt" -> caption(i).getBytes("UTF-8"),
          s"${key(i)}.tok" -> ascii(tokens(caption(i)).mkString("[", ", ", "]")),
          s"${key(i)}.score" -> ascii(score(i).toString))
      }
      TestFiles.writeTar(dir.resolve(f"captions-$s%03d.tar"), members)
    }
    dir
  }

  /** The sample number in a key of this data set. */
  def number(key: String): Int = key.stripPrefix("img-").toInt

  /**
   * The same samples `0 until n` as one Parquet file `dir/captions.parquet`, written by DuckDB:
   * `image` BLOB, `label` INTEGER, `caption` VARCHAR, `tokens` INTEGER[], `score` FLOAT, and
   * `extra` (a MAP no field reads); row `nullCaption`'s caption is null. Returns `dir`.
   */
  def writeParquet(dir: Path, n: Int, nullCaption: Int = -1): Path = {
    Files.createDirectories(dir)
    val work = Files.createTempDirectory(dir.getParent, "_captions")
    try {
      val csv = work.resolve("rows.csv")
      val lines = (0 until n).map { i =>
        Files.write(work.resolve(s"$i.jpg"), SampleImages.jpeg(Seed, i, 48, 40))
        s"$i\t${work.resolve(s"$i.jpg")}\t${label(i)}\t${caption(i)}\t${score(i)}"
      }
      Files.write(csv, ("row\tfile\tlabel\tcaption\tscore" +: lines).asJava)
      ParquetInputs.duckdb(
        s"""COPY (SELECT b.content AS image, l.label AS label,
           |  CASE WHEN l.row = $nullCaption THEN NULL ELSE l.caption END AS caption,
           |  list_transform(string_split(l.caption, ' '), x -> length(x))::INTEGER[] AS tokens,
           |  l.score::FLOAT AS score, MAP {'row': l.row} AS extra
           |  FROM read_csv('$csv', header = true, delim = '\t', columns = {'row': 'INTEGER', 'file': 'VARCHAR',
           |    'label': 'INTEGER', 'caption': 'VARCHAR', 'score': 'DOUBLE'}) l
           |  JOIN read_blob('$work/*.jpg') b ON b.filename = l.file ORDER BY l.row)
           |TO '${dir.resolve("captions.parquet")}' (FORMAT parquet)""".stripMargin)
    } finally TestFiles.deleteRecursively(work)
    dir
  }
}
