package dev.spindle.spark.stores

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.manifest.ShardCatalog
import dev.spindle.spark.shard.ParquetColumns
import dev.spindle.spark.preprocess.{PreprocessJob, TestSamples}
import dev.spindle.spark.sink.OutputLock
import dev.spindle.spark.testkit.{ArrowFiles, ParquetInputs, RemoteStore, SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The contract every storage server keeps (one subclass per server, [[HdfsStoreSuite]] and
 * [[S3StoreSuite]]): the same WebDataset tars, image folder and Parquet file, copied to the server,
 * give `feed` the same per-rank plan digests and delivered digests, the DataSource the same rows,
 * and `preprocess` the same output as on local disk; `preprocess` writes that output to the server,
 * committed there (its manifest, its part files, nothing else), and it reads back whole.
 */
abstract class StoreContract extends AnyFunSuite with SparkFixture {
  import StoreContract.Seen

  /** The server's name in the tests' names. */
  protected def storeName: String

  /** Starts the server, its files under `base`. */
  protected def startStore(base: Path): RemoteStore

  @transient protected var store: RemoteStore = _
  private var base: Path = _

  override protected def extraConf: Map[String, String] = store.sparkSettings

  override protected def beforeAll(): Unit = {
    base = TestFiles.tempDir("store")
    store = startStore(base.resolve("server"))
    super.beforeAll()
  }

  override protected def afterAll(): Unit =
    try super.afterAll()
    finally try if (store != null) store.close() finally TestFiles.deleteRecursively(base)

  private val conf = Map("spark.spindle.image.size" -> "8", "spark.spindle.batchSize" -> "4",
    "spark.spindle.partitionBytes" -> "1")

  /** What `in` gives; `local` is where preprocess's output `out` is on local disk, once it is. */
  private def seen(in: String, out: String, local: => Path): Seen = {
    val feed = FeedCommand.run(spark, Array("--input", in, "--size", "8", "--world-size", "2",
      "--batch-size", "3"))
    val hadoop = spark.sparkContext.hadoopConfiguration
    val manifest = new ShardCatalog(hadoop, 1000, ParquetColumns.DEFAULT)
      .list(in, ShardCatalog.Counter.onThisThread(hadoop))
    val plan = FeedData.planDigests(manifest, FeedData.spec(0, 0, 2, 3))
    val rows = spark.read.format("spindle").options(Map("size" -> "8", "batchSize" -> "4")).load(in)
      .collect().toSeq.map(r => (r.getAs[Long]("index"), r.getAs[String]("key"), r.getAs[Int]("label"),
        r.getAs[Array[Byte]]("image").toSeq)).sortBy(_._1)
    val report = PreprocessJob.run(spark, in, out, false, conf.asJava)
    assert(report.get("images") == rows.size.toLong)
    Seen(plan, FeedData.digests(feed, 0), rows, ArrowFiles.readAll(local))
  }

  /**
   * Runs feed, the DataSource and preprocess over the local input `local` and over its copy on the
   * server (preprocess writing to the server, read back after), and compares what they gave.
   */
  private def sameAsLocal(name: String, local: Path): Unit = {
    val work = Files.createDirectories(base.resolve(name))
    val remote = store.upload(local, s"$name/in")
    val expected = seen(local.toString, work.resolve("out").toString, work.resolve("out"))
    val outUri = store.uri(s"$name/out")
    val got = seen(remote, outUri, store.download(outUri, work.resolve("back")))
    assert(expected.rows.nonEmpty)
    assert(got.plan == expected.plan, "plan digests")
    assert(got.delivered == expected.delivered, "delivered digests")
    assert(got.delivered == got.plan, "every planned sample delivered")
    assert(got.rows == expected.rows, "DataSource rows")
    assert(got.preprocessed == expected.preprocessed, "preprocess output read back")
    assert(got.preprocessed.size == expected.rows.size)
    val listed = ArrowFiles.partFiles(work.resolve("back")).map(_.getFileName.toString).toSet
    assert(store.names(outUri).filterNot(_ == OutputLock.FILE) == listed + "_manifest.json",
      "the committed output is its manifest and the files it lists")
  }

  test(s"WebDataset tars on $storeName: feed, the DataSource and preprocess as on local disk") {
    val dir = FeedData.tars(base.resolve("local-tars"), Seq(7, 5, 9))
    sameAsLocal("tars", dir)
  }

  test(s"an image folder on $storeName: feed, the DataSource and preprocess as on local disk") {
    val dir = base.resolve("local-folder")
    Seq("cat/a.png" -> FeedData.png(1), "cat/b.jpg" -> TestSamples.jpeg(2L, 1, 30, 20),
      "dog/c.png" -> FeedData.png(3), "dog/d.jpeg" -> TestSamples.jpeg(2L, 3, 20, 30),
      "emu/e.png" -> FeedData.png(5), "emu/f.png" -> FeedData.png(6)).foreach { case (n, b) =>
      Files.createDirectories(dir.resolve(n).getParent)
      Files.write(dir.resolve(n), b)
    }
    sameAsLocal("folder", dir)
  }

  test(s"a Parquet file on $storeName: feed, the DataSource and preprocess as on local disk") {
    val dir = ParquetInputs.spark(spark, base.resolve("local-parquet"), FeedData.rows(Seq(11)),
      struct = false)
    sameAsLocal("parquet", dir)
  }
}

object StoreContract {
  /**
   * What one input gives: its plan's per-rank digests (from the manifest the catalog counts there),
   * the digests feed delivered, the DataSource's rows (index, key, label, pixels) and the rows of
   * preprocess's Arrow output.
   */
  private[stores] final case class Seen(plan: Seq[String], delivered: Seq[String],
      rows: Seq[(Long, String, Int, Seq[Byte])], preprocessed: Seq[dev.spindle.spark.testkit.Row])
}
