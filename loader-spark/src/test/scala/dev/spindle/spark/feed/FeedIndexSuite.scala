package dev.spindle.spark.feed

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.manifest.{ManifestCache, ShardCatalog}
import dev.spindle.spark.plan.{PlanSpec, Remainder}
import dev.spindle.spark.shard.ParquetColumns
import dev.spindle.spark.testkit.{CountingFileSystem, SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `feed` over tar shards with their member indexes, on a file system that counts bytes and read
 * requests as an object store bills them ([[CountingFileSystem]]): a window-shuffle epoch reads
 * about the data set once, in fewer requests than samples, and the same digests come out with the
 * index on, off, damaged or stale.
 */
class FeedIndexSuite extends AnyFunSuite with SparkFixture {
  import FeedData._

  /** 16 shards of 24 samples; a window of 4 shards, so each read group opens several shards. */
  private val Shards = Seq.fill(16)(24)
  private val Window = 96

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    CountingFileSystem.register(spark.sparkContext.hadoopConfiguration)
  }

  private def feed(in: String, conf: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in, "--size", "8", "--world-size", "2", "--batch-size", "8",
      "--seed", "3", "--conf", s"spark.spindle.shuffleWindow=$Window",
      "--conf", "spark.spindle.feed.readBatches=4") ++ conf.flatMap(c => Seq("--conf", c))).toArray)

  private def io(r: FeedReport): Map[String, Long] =
    r.get("io").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      .collect { case (k, v: Number) => k -> v.longValue }.toMap // cache_unusable is a string

  private def expected(in: Path): Seq[String] =
    planDigests(manifest(in), new PlanSpec(3, 0, 2, 8, Remainder.DROP_LAST, Window))

  private def datasetBytes(in: Path): Long =
    Files.list(in).iterator().asScala.filter(_.toString.endsWith(".tar")).map(Files.size).sum

  /** Counts the input (writing the cache and the indexes) without reading any sample. */
  private def count(in: String): ManifestCache.Loaded = {
    val conf = spark.sparkContext.hadoopConfiguration
    new ManifestCache(conf, 1000, ParquetColumns.DEFAULT, ShardCatalog.Counter.onThisThread(conf))
      .load(in, null, false)
  }

  test("a window-shuffle epoch reads the data set about once, in fewer requests than samples; without the index, more") {
    TestFiles.withTempDir("feed-index") { dir =>
      val local = tars(dir.resolve("in"), Shards)
      val in = CountingFileSystem.uri(local)
      val loaded = count(in)
      val index = loaded.reportEntry().get("index").asInstanceOf[java.util.Map[String, AnyRef]]
      assert(index.get("status") == "written for 16 of 16 tar shards", index)
      assert(Files.exists(local.resolve("_spindle_index/shard-000.tar.idx")))

      CountingFileSystem.reset()
      val on = feed(in, "spark.spindle.io.coalesceBytes=0")
      val (bytesOn, requestsOn) = (CountingFileSystem.bytesRead(".tar") + CountingFileSystem.bytesRead(".idx"),
        CountingFileSystem.readRequests(".tar") + CountingFileSystem.readRequests(".idx"))
      val samples = on.get("samples_read").asInstanceOf[Long]
      val dataset = datasetBytes(local)
      assert(digests(on, 0) == expected(local))
      assert(samples == 384L)
      assert(bytesOn <= 1.1 * dataset, s"read $bytesOn bytes of a $dataset-byte data set")
      assert(requestsOn < samples, s"$requestsOn requests for $samples samples")
      assert(io(on).filter(!_._1.startsWith("cache_")) == Map("bytes_read" -> bytesOn, "read_requests" -> requestsOn,
        "shard_opens" -> io(on)("shard_opens"), "shard_opens_indexed" -> io(on)("shard_opens"),
        "shard_opens_compressed" -> 0L), "the report counts what the store saw")
      assert(io(on)("shard_opens") > Shards.size.toLong, "each shard opened by several read groups")
      info(f"index on: ${bytesOn.toDouble / dataset}%.3f× the data set's $dataset bytes, " +
        f"${requestsOn.toDouble / samples}%.3f requests per sample ($bytesOn bytes, $requestsOn requests, " +
        s"$samples samples, ${io(on)("shard_opens")} shard opens)")

      CountingFileSystem.reset()
      val off = feed(in, "spark.spindle.io.index=false")
      val (bytesOff, requestsOff) = (CountingFileSystem.bytesRead(".tar") + CountingFileSystem.bytesRead(".idx"),
        CountingFileSystem.readRequests(".tar") + CountingFileSystem.readRequests(".idx"))
      assert(digests(off, 0) == expected(local))
      // in order, each open reads from the shard's start to its last planned sample: the members
      // between are passed over by header, but members this small lie inside the reader's buffer
      // (so, read), and a shard is opened by several read groups. (Its requests are not compared:
      // a skip within the buffer costs none, so with small members they are few.)
      assert(bytesOff > bytesOn, s"off: $bytesOff bytes, $requestsOff requests")
      assert(io(off)("bytes_read") == bytesOff && io(off)("read_requests") == requestsOff, io(off))
      assert(io(off)("shard_opens_indexed") == 0L && io(off)("shard_opens") == io(on)("shard_opens"))
      info(f"index off: ${bytesOff.toDouble / dataset}%.3f× the data set, " +
        f"${requestsOff.toDouble / samples}%.3f requests per sample ($bytesOff bytes, $requestsOff requests)")
    }
  }

  test("damaged or stale index files: the shards are read whole, with the same digests") {
    TestFiles.withTempDir("feed-index-bad") { dir =>
      val local = tars(dir.resolve("in"), Shards)
      val in = CountingFileSystem.uri(local)
      count(in)
      val files = Files.list(local.resolve("_spindle_index")).iterator().asScala
        .filter(_.toString.endsWith(".idx")).toSeq.sorted
      assert(files.size == 16)
      files.take(8).foreach { f => // damaged: one bit flipped
        val b = Files.readAllBytes(f)
        b(b.length - 6) = (b(b.length - 6) ^ 1).toByte
        Files.write(f, b)
      }
      files.slice(8, 12).foreach { f => // stale: taken of a version of the shard modified 1 s later
        val b = java.nio.ByteBuffer.wrap(Files.readAllBytes(f))
        b.putLong(28, b.getLong(28) + 1000) // after the 20-byte format line and the shard's size
        val crc = new java.util.zip.CRC32C()
        crc.update(b.array(), 0, b.limit() - 4)
        b.putInt(b.limit() - 4, crc.getValue.toInt)
        Files.write(f, b.array())
      }
      val r = feed(in)
      assert(digests(r, 0) == expected(local))
      assert(r.get("failures") == 0L)
      val opens = io(r)
      assert(opens("shard_opens_indexed") > 0L && opens("shard_opens_indexed") < opens("shard_opens"), opens)
    }
  }

  test("a compressed input is read whole once per open, and the report counts those opens") {
    TestFiles.withTempDir("feed-index-gz") { dir =>
      val plain = tars(dir.resolve("plain"), Seq(10, 10))
      val packed = Files.createDirectories(dir.resolve("in"))
      Files.list(plain).iterator().asScala.filter(_.toString.endsWith(".tar")).foreach { t =>
        val out = new java.util.zip.GZIPOutputStream(Files.newOutputStream(packed.resolve(t.getFileName.toString + ".gz")))
        try out.write(Files.readAllBytes(t)) finally out.close()
      }
      val loaded = count(CountingFileSystem.uri(packed))
      val status = loaded.reportEntry().get("index").asInstanceOf[java.util.Map[String, AnyRef]].get("status").toString
      assert(status.startsWith("written for 0 of 2 tar shards; none for "), status)
      assert(status.contains("a compressed tar has no random access"), status)
      val r = feed(CountingFileSystem.uri(packed))
      val opens = io(r)
      assert(opens("shard_opens") > 0L && opens("shard_opens_compressed") == opens("shard_opens"), opens)
      assert(opens("shard_opens_indexed") == 0L)
    }
  }
}
