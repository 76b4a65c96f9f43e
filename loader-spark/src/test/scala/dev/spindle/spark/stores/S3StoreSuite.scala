package dev.spindle.spark.stores

import java.net.URI
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.testkit.{RemoteStore, S3Server, TestFiles}
import org.apache.hadoop.fs.FileSystem
import org.apache.hadoop.fs.statistics.{IOStatisticsSupport, StoreStatisticNames, StreamStatisticNames}

/** [[StoreContract]] on a real S3 server (S3Proxy) through S3A. */
class S3StoreSuite extends StoreContract {
  override protected def storeName: String = "S3"
  override protected def startStore(base: Path): RemoteStore = new S3Server().start()

  /** GET requests and bytes S3A's file system of the session has read so far (closed streams). */
  private def s3aReads(uri: String): (Long, Long) = {
    val stats = IOStatisticsSupport.retrieveIOStatistics(
      FileSystem.get(URI.create(uri), spark.sparkContext.hadoopConfiguration))
    def counter(key: String): Long = Option(stats.counters().get(key)).map(_.longValue).getOrElse(0L)
    (counter(StoreStatisticNames.ACTION_HTTP_GET_REQUEST), counter(StreamStatisticNames.STREAM_READ_BYTES))
  }

  private def feed(in: String, conf: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in, "--size", "8", "--world-size", "4", "--batch-size", "4",
      "--seed", "5", "--epochs", "1", "--conf", "spark.spindle.shuffleWindow=48",
      "--conf", "spark.spindle.feed.readBatches=2", "--conf", "spark.spindle.io.coalesceBytes=0") ++
      conf.flatMap(c => Seq("--conf", c))).toArray)

  private def io(r: FeedReport): Map[String, Long] =
    r.get("io").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      .collect { case (k, v: Number) => k -> v.longValue }.toMap

  test("a window-shuffle epoch through S3A reads the data set about once, in at most one GET per sample; without the index, more") {
    TestFiles.withTempDir("s3-window") { dir =>
      val local = FeedData.tars(dir.resolve("in"), Seq.fill(8)(24))
      val dataset = Files.list(local).iterator().asScala.map(Files.size).sum
      val in = store.upload(local, "window/in")
      val first = feed(in) // counts the manifest, writes the cache and the member indexes
      assert(io(first)("shard_opens_indexed") == io(first)("shard_opens"), io(first))

      val (gets0, bytes0) = s3aReads(in)
      val on = feed(in)
      val (gets1, bytes1) = s3aReads(in)
      val off = feed(in, "spark.spindle.io.index=false")
      val (gets2, bytes2) = s3aReads(in)

      val samples = on.get("samples_read").asInstanceOf[Long]
      assert(samples == 192L && off.get("samples_read") == 192L)
      assert(FeedData.digests(on, 0) == FeedData.digests(off, 0), "the same batches either way")
      assert(FeedData.digests(on, 0) == FeedData.digests(first, 0))
      val (getsOn, bytesOn) = (gets1 - gets0, bytes1 - bytes0)
      assert(getsOn > 0 && bytesOn > 0, "S3A counted the epoch's reads")
      assert(bytesOn <= 1.1 * dataset, s"read $bytesOn bytes of a $dataset-byte data set through S3A")
      assert(getsOn <= samples, s"$getsOn GETs for $samples samples")
      assert(bytes2 - bytes0 - bytesOn > bytesOn, s"without the index: ${bytes2 - bytes1} bytes")
      info(f"S3A, index on: ${bytesOn.toDouble / dataset}%.3f× the data set's $dataset bytes, " +
        f"${getsOn.toDouble / samples}%.3f GETs per sample; index off: " +
        f"${(bytes2 - bytes1).toDouble / dataset}%.3f×, ${(gets2 - gets1).toDouble / samples}%.3f GETs per sample")
    }
  }
}
