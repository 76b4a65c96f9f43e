package dev.spindle.spark.shard

import java.io.FileInputStream
import java.nio.file.{Files, Path}
import java.util.zip.CRC32C

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.{ArrayNode, ObjectNode}
import dev.spindle.spark.cli.{Errors, FeedCommand}
import dev.spindle.spark.feed.{FeedData, Preprocessed}
import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.ipc.ArrowFileReader
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.manifest.ShardCatalog

/**
 * What a `preprocess` output's manifest records of each part file (its CRC-32C, an Arrow file's
 * record batch checksums, its stored index range) and what readers check by it: a part file
 * swapped for another run's of the same size, two part files exchanged, a reordered files list or
 * a changed byte fail naming the file, where they used to be fed as if nothing had happened. The
 * `.crc` side files are deleted with every change, as object stores and HDFS have none to catch it.
 */
class PreprocessedChecksSuite extends AnyFunSuite with SparkFixture {
  import FeedData._

  override protected def extraConf: Map[String, String] = Preprocessed.smallParquetGroups

  private val conf = new Configuration()
  private val JSON = new ObjectMapper()

  private def prep(dir: Path, format: String, counts: Seq[Int] = Seq(13, 7, 21),
      extra: Map[String, String] = Map.empty): Path =
    Preprocessed.write(spark, tars(dir.resolve("in"), counts), dir.resolve("prep"), format, extra)

  private def catalog(dir: Path): Manifest =
    new ShardCatalog(conf, 1000).list(dir.toString, ShardCatalog.Counter.onThisThread(conf))

  private def files(out: Path): Seq[ObjectNode] =
    JSON.readTree(out.resolve("_manifest.json").toFile).get("files").asScala.toSeq.map(_.asInstanceOf[ObjectNode])

  private def editManifest(out: Path)(edit: ObjectNode => Unit): Unit = {
    val tree = JSON.readTree(out.resolve("_manifest.json").toFile).asInstanceOf[ObjectNode]
    edit(tree)
    JSON.writeValue(out.resolve("_manifest.json").toFile, tree)
  }

  private def feed(out: Path) =
    FeedCommand.run(spark, Array("--input", out.toString, "--world-size", "2", "--batch-size", "4"))

  private def feedFails(out: Path): String = Errors.rootMessage(intercept[Exception](feed(out)))

  private def crc(bytes: Array[Byte], from: Long = 0, length: Long = -1): String = {
    val c = new CRC32C()
    c.update(bytes, from.toInt, if (length < 0) bytes.length else length.toInt)
    PartChecks.hex(c.getValue)
  }

  /** Each record batch's checksum, from the file's own bytes and block list, and its footer's list. */
  private def arrowBatches(file: Path): (String, String) = {
    val bytes = Files.readAllBytes(file)
    val allocator = new RootAllocator(Long.MaxValue)
    val in = new FileInputStream(file.toFile)
    try {
      val reader = new ArrowFileReader(in.getChannel, allocator)
      try {
        val blocks = reader.getRecordBlocks.asScala
        (blocks.map(b => crc(bytes, b.getOffset, b.getMetadataLength + b.getBodyLength)).mkString,
          reader.getMetaData.get(PartChecks.BATCH_CRCS))
      } finally reader.close()
    } finally { in.close(); allocator.close() }
  }

  private def storedIndices(out: Path): Seq[Seq[Long]] =
    catalog(out).shards.asScala.toSeq.map { s =>
      val r = ShardReader.open(s, conf, new SampleLimits(1 << 20, 0))
      try r.asScala.map(_.stored.index).toSeq finally r.close()
    }

  test("the manifest records each part file's CRC-32C, its record batches' and its stored index range") {
    for (format <- Seq("arrow", "parquet")) TestFiles.withTempDir("chk-m") { dir =>
      val out = prep(dir, format)
      val parts = ArrowFiles.partFiles(out)
      val indices = storedIndices(out)
      assert(indices == Seq(0L to 12L, 13L to 19L, 20L to 40L), format)
      for ((entry, (part, stored)) <- files(out).zip(parts.zip(indices))) {
        assert(entry.get("crc32c").asText == crc(Files.readAllBytes(part)), s"$format $part")
        assert(entry.get("first_index").asLong == stored.head && entry.get("last_index").asLong == stored.last)
        if (format == "arrow") {
          val (computed, footer) = arrowBatches(part)
          assert(footer == computed && computed.length == 8 * ((stored.size + 3) / 4), part)
          assert(entry.get("batches_crc32c").asText == PartChecks.hex(PartChecks.crcOfList(footer)))
        } else assert(!entry.has("batches_crc32c"))
      }
    }
  }

  test("samples quarantined by preprocess leave gaps in a file's stored indices; its rows still check") {
    for (format <- Seq("arrow", "parquet")) TestFiles.withTempDir("chk-gap") { dir =>
      val in = tars(dir.resolve("in"), Seq(13, 7, 21), bad = Set((0, 3), (2, 20)))
      val out = Preprocessed.write(spark, in, dir.resolve("prep"), format,
        Map("spark.spindle.maxFailures" -> "2"))
      assert(files(out).map(f => (f.get("rows").asLong, f.get("first_index").asLong, f.get("last_index").asLong)) ==
        Seq((12L, 0L, 12L), (7L, 13L, 19L), (20L, 20L, 39L)), format)
      assert(storedIndices(out).flatten == (0L to 39L).filterNot(_ == 3L), format)
      assert(feed(out).get("images") == 32L, format) // 39 rows, 2 ranks × batches of 4: 4 batches each
    }
  }

  test("a part file swapped for another run's same-size part fails the feed, naming the file") {
    TestFiles.withTempDir("chk-swap") { dir =>
      val out = prep(dir.resolve("a"), "arrow")
      // the same input preprocessed again, every image flipped: another file of the same size
      val other = prep(dir.resolve("b"), "arrow", extra = Map(
        "spark.spindle.image.transforms" -> "resize(8),center_crop(8),hflip(1)"))
      val (part, theirs) = (ArrowFiles.partFiles(out)(1), ArrowFiles.partFiles(other)(1))
      assert(Files.size(part) == Files.size(theirs))
      assert(!java.util.Arrays.equals(Files.readAllBytes(part), Files.readAllBytes(theirs)))
      Preprocessed.overwrite(part, Files.readAllBytes(theirs))
      val e = feedFails(out)
      assert(e.contains(s"file:$part no longer matches the _manifest.json that lists it: its record" +
        " batches' checksums (2 batches, spindle.batch_crc32c in its footer) hash to "), e)
      assert(e.contains(", the manifest lists batches_crc32c " + files(out)(1).get("batches_crc32c").asText), e)
    }
  }

  test("a Parquet part swapped for another run's of the same size fails any read of it whole") {
    TestFiles.withTempDir("chk-pswap") { dir =>
      val out = prep(dir.resolve("a"), "parquet")
      val other = prep(dir.resolve("b"), "parquet", extra = Map(
        "spark.spindle.image.transforms" -> "resize(8),center_crop(8),hflip(1)"))
      val (part, theirs) = (ArrowFiles.partFiles(out)(2), ArrowFiles.partFiles(other)(2))
      Preprocessed.overwrite(part, Files.readAllBytes(theirs))
      // the flipped images may compress to another size: the manifest says the new one, as if
      // they had not, so that only the content tells the files apart
      editManifest(out)(m => m.get("files").get(2).asInstanceOf[ObjectNode].put("bytes", Files.size(part)))
      val expected = s"file:$part no longer matches the _manifest.json that lists it: its CRC-32C is " +
        crc(Files.readAllBytes(part)) + ", the manifest lists " + files(out)(2).get("crc32c").asText
      val query = Errors.rootMessage(intercept[Exception](
        spark.read.format("spindle").load(out.toString).count()))
      assert(query.contains(expected), query)
      val again = Errors.rootMessage(intercept[Exception](PreprocessJob.run(spark, out.toString,
        dir.resolve("again").toString, false, java.util.Map.of("spark.spindle.batchSize", "4"))))
      assert(again.contains(expected), again)
    }
  }

  test("two part files exchanged: Arrow fails on their checksums, Parquet on the stored index of the first row read") {
    for (format <- Seq("arrow", "parquet")) TestFiles.withTempDir("chk-x") { dir =>
      val out = prep(dir, format, counts = Seq(8, 8, 8))
      val Seq(a, b, _) = ArrowFiles.partFiles(out)
      val (bytesA, bytesB) = (Files.readAllBytes(a), Files.readAllBytes(b))
      Preprocessed.overwrite(a, bytesB)
      Preprocessed.overwrite(b, bytesA)
      // Parquet files of other pixels may differ in size: the manifest takes the sizes along, as
      // for two files of one size, so that only their content tells them apart
      editManifest(out) { m =>
        for (i <- 0 to 1) m.get("files").get(i).asInstanceOf[ObjectNode].put("bytes", Files.size(Seq(a, b)(i)))
      }
      val e = feedFails(out)
      if (format == "arrow") {
        assert(e.contains("no longer matches the _manifest.json that lists it: its record batches' checksums"), e)
      } else {
        // Parquet keeps no manifest-vouched checksum a partial read can use: the index column tells
        val at = """file:(\S+) no longer matches the _manifest.json that lists it: its row (\d+) holds the stored index (\d+), where the manifest puts index (\d+) \(was the manifest's files list reordered, or this file replaced by another run's\?\)""".r
        val m = at.findFirstMatchIn(e).getOrElse(fail(e))
        val (file, row, found, expected) = (m.group(1), m.group(2).toLong, m.group(3).toLong, m.group(4).toLong)
        assert(Set(a.toString, b.toString)(file), e)
        assert(expected == (if (file == a.toString) row else 8 + row), e)
        assert(found == (if (file == a.toString) 8 + row else row), e)
      }
    }
  }

  test("a reversed files list is refused before any task, naming the files out of order") {
    for (format <- Seq("arrow", "parquet")) TestFiles.withTempDir("chk-rev") { dir =>
      val out = prep(dir, format)
      val names = files(out).map(_.get("path").asText)
      editManifest(out) { m =>
        val reversed = m.get("files").asScala.toSeq.reverse
        val list = m.putArray("files")
        reversed.foreach(list.add)
      }
      val e = intercept[IllegalArgumentException](feed(out)).getMessage
      assert(e == s"Invalid preprocess manifest file:$out/_manifest.json: files lists '${names(1)}' (stored" +
        s" indices 13..19) after '${names(2)}' (..40); preprocess lists its part files in ascending index" +
        " order (was the list reordered?)", e)
    }
  }

  test("a changed byte in a record batch fails the read of that batch; batches around it are read") {
    TestFiles.withTempDir("chk-byte") { dir =>
      val out = prep(dir, "arrow")
      val part = ArrowFiles.partFiles(out)(2) // 21 rows: batches of 4, the last of 1
      val rows = ArrowFiles.read(part)._2
      val bytes = Files.readAllBytes(part)
      val at = bytes.indexOfSlice(rows(9).image.slice(40, 72)) // row 9: batch 2, rows 8 to 11
      assert(at > 0)
      bytes(at) = (bytes(at) ^ 1).toByte
      Preprocessed.overwrite(part, bytes)
      val shard = catalog(out).shards.get(2)
      val limits = new SampleLimits(1 << 20, 0)
      val some = ShardReader.open(shard, conf, limits, Array(0, 5, 13, 20))
      try assert(some.asScala.map(_.image.toSeq).toSeq == Seq(0, 5, 13, 20).map(rows(_).image))
      finally some.close()
      val damaged = ShardReader.open(shard, conf, limits, Array(3, 10))
      try {
        assert(damaged.next().position == 3)
        val e = intercept[java.io.UncheckedIOException](damaged.next()).getMessage
        assert(e.contains(s"file:$part no longer matches the _manifest.json that lists it: its record" +
          " batch 2 (rows 8 to 11) has CRC-32C "), e)
        assert(e.contains(", its footer lists " + arrowBatches(part)._2.substring(16, 24)), e)
      } finally damaged.close()
      assert(feedFails(out).contains("its record batch 2 (rows 8 to 11) has CRC-32C"))
    }
  }

  test("a manifest written before the checks were recorded is read as before, unchecked") {
    for (format <- Seq("arrow", "parquet")) TestFiles.withTempDir("chk-old") { dir =>
      val out = prep(dir, format)
      val rows = storedIndices(out)
      editManifest(out) { m =>
        m.get("files").asScala.foreach { case f: ObjectNode =>
          f.remove(java.util.List.of("crc32c", "batches_crc32c", "first_index", "last_index")) }
      }
      assert(catalog(out).shards.asScala.forall(_.checks == null))
      assert(storedIndices(out) == rows)
      assert(feed(out).get("images") == 40L, format) // 41 samples, batches of 4 per 2 ranks: drop 1
    }
  }

  test("an Arrow part whose manifest holds checksums is read past Hadoop's .crc side file; without them Hadoop's still checks") {
    TestFiles.withTempDir("chk-side") { dir =>
      val out = prep(dir, "arrow")
      val part = ArrowFiles.partFiles(out)(2)
      val side = part.resolveSibling("." + part.getFileName + ".crc")
      val sums = Files.readAllBytes(side)
      sums(sums.length - 1) = (sums(sums.length - 1) ^ 1).toByte // the footer's chunk: stale
      Files.write(side, sums)
      // Spindle's own CRC-32C checks every record batch read and the footer's list of them, so
      // the side file is not read (it would check those bytes a second time)
      assert(feed(out).get("images") == 40L) // 41 samples, batches of 4 per 2 ranks: drop 1
      editManifest(out) { m => // an earlier Spindle's manifest: nothing of Spindle's checks
        m.get("files").asScala.foreach { case f: ObjectNode =>
          f.remove(java.util.List.of("crc32c", "batches_crc32c", "first_index", "last_index")) }
      }
      val e = feedFails(out)
      assert(e.contains("Checksum error") && e.contains(part.getFileName.toString), e)
    }
  }

  test("malformed checks in a manifest are refused, naming the file and the field") {
    TestFiles.withTempDir("chk-bad") { dir =>
      val out = prep(dir, "arrow")
      val saved = Files.readString(out.resolve("_manifest.json"))
      def refused(edit: ObjectNode => Unit): String = {
        editManifest(out)(m => edit(m.get("files").get(1).asInstanceOf[ObjectNode]))
        try intercept[IllegalArgumentException](catalog(out)).getMessage
        finally Files.writeString(out.resolve("_manifest.json"), saved)
      }
      val name = files(out)(1).get("path").asText
      assert(refused(_.put("crc32c", "XYZ")).endsWith(s"\"crc32c\" of '$name' is \"XYZ\" (must be 8 lowercase hex digits)"))
      assert(refused(_.remove("batches_crc32c")).endsWith(s"\"batches_crc32c\" of '$name' is missing (must be 8 lowercase hex digits)"))
      assert(refused(_.put("last_index", 14)).endsWith(s"'$name' holds 7 rows but its stored indices are 13..14"))
    }
  }
}
