package dev.spindle.spark.manifest
import java.io.IOException
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import dev.spindle.spark.cli.{Errors, FeedCommand}
import dev.spindle.spark.feed.{FeedData, Preprocessed}
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileSystem
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.shard.Sample
import dev.spindle.spark.shard.SampleLimits
import dev.spindle.spark.shard.Shard
import dev.spindle.spark.shard.ShardFormat
import dev.spindle.spark.shard.ShardReader
import dev.spindle.spark.shard.StoredImages

/**
 * A `preprocess` output as an input: its `_manifest.json` alone makes the manifest, its part
 * files read as stored rows (all of them, or only the wanted ones), and part files that no longer
 * match the manifest fail or are quarantined naming the file and the row.
 */
class PreprocessedInputSuite extends AnyFunSuite with SparkFixture {
  import FeedData._

  override protected def extraConf: Map[String, String] = Preprocessed.smallParquetGroups

  private val conf = new Configuration()
  private val limits = new SampleLimits(1 << 20, 0)
  private val JSON = new ObjectMapper()

  private def catalog(dir: Path): Manifest =
    new ShardCatalog(conf, 1000).list(dir.toString, ShardCatalog.Counter.onThisThread(conf))

  private def prep(dir: Path, format: String, counts: Seq[Int] = Seq(13, 7, 21),
      extra: Map[String, String] = Map.empty): Path =
    Preprocessed.write(spark, tars(dir.resolve("in"), counts), dir.resolve("prep"), format, extra)

  private def readAll(shard: Shard, positions: Array[Int] = null): Seq[Sample] = {
    val r = if (positions == null) ShardReader.open(shard, conf, limits)
      else ShardReader.open(shard, conf, limits, positions)
    try r.asScala.toSeq finally r.close()
  }

  private def editManifest(prep: Path)(edit: ObjectNode => Unit): Unit = {
    val file = prep.resolve("_manifest.json")
    val tree = JSON.readTree(file.toFile).asInstanceOf[ObjectNode]
    edit(tree)
    JSON.writeValue(file.toFile, tree)
  }

  test("the manifest is the output's _manifest.json: its files in its order, its rows, nothing else") {
    for (format <- Seq("arrow", "parquet")) TestFiles.withTempDir("pi-m") { dir =>
      val out = prep(dir, format)
      val parts = ArrowFiles.partFiles(out)
      // a part file the manifest does not list (a dead job's) is no shard
      Files.copy(parts.head, out.resolve(parts.head.getFileName.toString.replace("part-00000", "part-00009")))
      val m = catalog(out)
      assert(m.shards.asScala.map(_.uri) == parts.map(p => "file:" + p.toString))
      assert(m.shards.asScala.map(_.samples) == Seq(13L, 7L, 21L))
      assert(m.shards.asScala.map(_.bytes) == parts.map(Files.size))
      assert(m.shards.asScala.map(_.format).toSet ==
        Set(if (format == "arrow") ShardFormat.DECODED_ARROW else ShardFormat.DECODED_PARQUET))
      assert(m.stored == new StoredImages(8, 8, 3, "resize(8),center_crop(8)"))
      assert(m.classNames.isEmpty)
      assert(m.input == "file:" + out.toString)
    }
  }

  test("an image folder's class names come back from the output's manifest") {
    TestFiles.withTempDir("pi-cls") { dir =>
      for ((c, i) <- Seq("cat", "dog").zipWithIndex; j <- 0 until 3) {
        Files.createDirectories(dir.resolve(s"in/$c"))
        Files.write(dir.resolve(s"in/$c/$j.png"), png(i * 10 + j))
      }
      val out = Preprocessed.write(spark, dir.resolve("in"), dir.resolve("prep"), "arrow")
      val m = catalog(out)
      assert(m.classNames.asScala == Seq("cat", "dog"))
      assert(m.shards.asScala.toSeq.flatMap(s => readAll(s)).map(s => (s.key, s.label.intValue)) ==
        Seq("cat/0.png" -> 0, "cat/1.png" -> 0, "cat/2.png" -> 0, "dog/0.png" -> 1, "dog/1.png" -> 1, "dog/2.png" -> 1))
    }
  }

  test("stored rows read whole equal the files' rows; keys, labels and indices are the stored ones") {
    for (format <- Seq("arrow", "parquet")) TestFiles.withTempDir("pi-r") { dir =>
      val out = prep(dir, format)
      val arrow = if (format == "arrow") ArrowFiles.readAll(out)
        else ArrowFiles.readAll(prep(dir.resolve("again"), "arrow"))
      val m = catalog(out)
      val got = m.shards.asScala.toSeq.flatMap(s => readAll(s))
      assert(got.map(s => (s.stored.index, s.key, s.label.intValue, s.image.toSeq)) ==
        arrow.map(r => (r.index, r.key, r.label, r.image)))
      assert(got.forall(_.usable) && got.map(_.position) == (0L until 13L) ++ (0L until 7L) ++ (0L until 21L))
      assert(got.head.imageName == "the stored image of row 0")
    }
  }

  test("reading positions yields those rows and loads only the record batches that hold them") {
    TestFiles.withTempDir("pi-pos") { dir =>
      // 224×224×3 images, 4 rows per record batch: 6 batches of 600 KB in the 21-row file
      // (Hadoop's local file system reads in blocks of 64 KB: small batches would not show it)
      val out = prep(dir, "arrow", extra = Map("spark.spindle.image.size" -> "224"))
      val shard = catalog(out).shards.get(2)
      val all = readAll(shard)
      def bytesRead = FileSystem.getAllStatistics.asScala.filter(_.getScheme == "file").map(_.getBytesRead).sum
      val before = bytesRead
      val some = readAll(shard, Array(5, 6, 30))
      val read = bytesRead - before
      assert(some.map(_.position) == Seq(5L, 6L), "a position past the end is not returned")
      assert(some.map(_.image.toSeq) == Seq(all(5).image.toSeq, all(6).image.toSeq))
      assert(some.map(_.key) == Seq(all(5).key, all(6).key))
      assert(read < shard.bytes / 3, s"read $read bytes of a ${shard.bytes}-byte file for one record batch")
    }
  }

  test("Parquet: positions are read across row groups, skipping the groups without one") {
    TestFiles.withTempDir("pi-ppos") { dir =>
      val out = prep(dir, "parquet", counts = Seq(250))
      val shard = catalog(out).shards.get(0)
      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(shard.uri), conf))
      try assert(reader.getRowGroups.asScala.map(_.getRowCount) == Seq(100L, 100L, 50L)) finally reader.close()
      val all = readAll(shard)
      val wanted = Seq(0, 99, 230, 249)
      val some = readAll(shard, wanted.toArray)
      assert(some.map(s => (s.position, s.key, s.stored.index, s.image.toSeq)) ==
        wanted.map(j => (j.toLong, all(j).key, j.toLong, all(j).image.toSeq)))
      assert(all.map(_.key) == (0 until 250).map(j => f"s0_$j%04d"))
    }
  }

  test("a folder whose _manifest.json is not preprocess's is listed as usual; a bad one is refused") {
    TestFiles.withTempDir("pi-bad") { dir =>
      val in = tars(dir.resolve("in"), Seq(3, 2))
      Files.writeString(in.resolve("_manifest.json"), """{"files": ["x"]}""")
      assert(catalog(in).shards.asScala.map(_.format).toSet == Set(ShardFormat.TAR))

      val out = prep(dir, "arrow")
      def refused(edit: ObjectNode => Unit): String = {
        val saved = Files.readString(out.resolve("_manifest.json"))
        editManifest(out)(edit)
        try intercept[IllegalArgumentException](catalog(out)).getMessage
        finally Files.writeString(out.resolve("_manifest.json"), saved)
      }
      val where = s"Invalid preprocess manifest file:$out/_manifest.json: "
      assert(refused(_.put("spindle_manifest_version", 2)) == where +
        "spindle_manifest_version is 2; this Spindle reads 1 (written by a newer Spindle?)")
      assert(refused(_.put("format", "orc")) == where + "format is 'orc' (arrow-ipc-file or parquet)")
      assert(refused(_.remove("image_shape")) == where + "\"image_shape\" is missing or not an array")
      assert(refused(_.putArray("image_shape").add(8).add(0).add(3)) == where +
        "image_shape[1] is 0 (must be an integer > 0)")
      assert(refused(m => m.get("files").get(1).asInstanceOf[ObjectNode].put("path", "../x.arrow")) ==
        where + "files lists '../x.arrow' (must be a file name in the folder ending with .arrow)")
      assert(refused(m => m.get("files").get(0).asInstanceOf[ObjectNode].put("rows", -1)).contains(
        "\"rows\" of 'part-00000-"), "names the file")
      Files.writeString(out.resolve("_manifest.json"), "{\"format\": ")
      val json = intercept[IOException](catalog(out)).getMessage
      assert(json.contains("_manifest.json cannot be read as JSON"), json)
    }
  }

  test("a part file cut short or replaced fails the feed, naming it and both sizes") {
    TestFiles.withTempDir("pi-cut") { dir =>
      val out = prep(dir, "arrow")
      val part = ArrowFiles.partFiles(out)(1)
      val size = Files.size(part)
      Preprocessed.overwrite(part, Files.readAllBytes(part).take(size.toInt - 100))
      def feed() = FeedCommand.run(spark, Array("--input", out.toString, "--world-size", "1", "--batch-size", "4"))
      val cut = Errors.rootMessage(intercept[Exception](feed()))
      assert(cut.contains(s"$part no longer matches the _manifest.json that lists it: it is ${size - 100}" +
        s" bytes, the manifest lists $size"), cut)
      Files.delete(part)
      val gone = Errors.rootMessage(intercept[Exception](feed()))
      assert(gone.contains(s"$part no longer matches the _manifest.json that lists it: it does not exist"), gone)
      // same size, not Arrow: named as such
      Preprocessed.overwrite(part, Array.fill(size.toInt)(7.toByte))
      val garbage = Errors.rootMessage(intercept[Exception](feed()))
      assert(garbage.contains(s"$part no longer matches") && garbage.contains("cannot be read as an Arrow IPC file"), garbage)
    }
  }

  test("a stored row whose pixels are not H·W·C bytes is quarantined, naming the file's row") {
    TestFiles.withTempDir("pi-len") { dir =>
      val out = prep(dir, "parquet", counts = Seq(13, 7))
      val part = ArrowFiles.partFiles(out).head
      val rows = spark.read.parquet(part.toUri.toString).collect().toSeq
      val schema = StructType(Seq(StructField("image", BinaryType), StructField("label", IntegerType),
        StructField("key", StringType), StructField("index", LongType)))
      val changed = rows.zipWithIndex.map { case (r, i) =>
        val image = r.getAs[Array[Byte]]("image")
        Row(if (i == 3) image.take(191) else image, r.getAs[Int]("label"), r.getAs[String]("key"), r.getAs[Long]("index"))
      }
      Preprocessed.overwrite(part, Array.emptyByteArray)
      Files.delete(part)
      dev.spindle.spark.testkit.ParquetInputs.write(spark, spark.createDataFrame(changed.asJava, schema), part)
      editManifest(out)(m => m.get("files").get(0).asInstanceOf[ObjectNode].put("bytes", Files.size(part)))
      val r = FeedCommand.run(spark, Array("--input", out.toString, "--world-size", "1", "--batch-size", "4",
        "--remainder", "PAD", "--conf", "spark.spindle.maxFailures=1"))
      val q = quarantine(r)
      assert(q.map(e => (e("key"), e("index"))) == Seq(("s0_0003", 3L)), q)
      assert(q.head("shard") == "file:" + part)
      assert(q.head("reason") == "the stored image of row 3 holds 191 bytes; the preprocess output's" +
        " image_shape [8, 8, 3] needs 192")
      assert(r.get("images") == 20L && r.get("failures") == 1L)
    }
  }

  test("a Parquet part file with a corrupt page quarantines the rows of its row group, naming them") {
    TestFiles.withTempDir("pi-page") { dir =>
      val out = prep(dir, "parquet", counts = Seq(250))
      val part = ArrowFiles.partFiles(out).head
      val rows = readAll(catalog(out).shards.get(0))
      val bytes = Files.readAllBytes(part)
      val at = bytes.indexOfSlice(rows(110).image.slice(60, 76)) // row group 1
      assert(at > 0)
      bytes(at) = (bytes(at) ^ 1).toByte
      Preprocessed.overwrite(part, bytes)
      // read whole, the file fails its CRC-32C before any row; read by positions (as feed reads
      // it), the page fails Parquet's page CRC and its row group's rows are quarantined
      val whole = intercept[IOException](readAll(catalog(out).shards.get(0))).getMessage
      assert(whole.startsWith(s"file:$part no longer matches the _manifest.json that lists it: its CRC-32C is "), whole)
      val got = readAll(catalog(out).shards.get(0), (0 until 250).toArray)
      val bad = got.filterNot(_.usable)
      assert(bad.map(_.position) == (100L until 200L), "row group 1, one page: all its rows")
      assert(bad.forall(s => s.key == s"${part.getFileName}#${s.position}"), bad.map(_.key))
      assert(bad.head.problem.contains("CRC checksum verification failed"), bad.head.problem)
      assert(bad.head.problem.contains(s"(${part.getFileName})"), bad.head.problem)
      assert(got.filter(_.usable).map(_.image.toSeq) == rows.filter(r => !bad.exists(_.position == r.position)).map(_.image.toSeq))
    }
  }
}
