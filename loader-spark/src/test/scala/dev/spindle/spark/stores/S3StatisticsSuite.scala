package dev.spindle.spark.stores

import java.nio.file.Files

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.testkit.{S3Server, TestFiles}
import org.apache.hadoop.fs.Path
import org.apache.hadoop.fs.statistics.{IOStatistics, IOStatisticsSupport, StoreStatisticNames, StreamStatisticNames}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * How to count what S3A asks of the store, proven on [[S3Server]]: S3A's own `IOStatistics`, of
 * one input stream and of the file system, give GET requests and bytes read. Reading one whole tar
 * shard costs one GET and exactly its size in bytes.
 */
class S3StatisticsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var s3: S3Server = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    s3 = new S3Server().start()
  }

  override protected def afterAll(): Unit =
    try if (s3 != null) s3.close()
    finally super.afterAll()

  private def counter(stats: IOStatistics, key: String): Long =
    Option(stats.counters().get(key)).map(_.longValue).getOrElse(0L)

  test("reading one whole tar shard through S3A costs one GET and its size in bytes") {
    TestFiles.withTempDir("s3-stats") { dir =>
      val tar = FeedData.tars(dir.resolve("in"), Seq(40)).resolve("shard-000.tar")
      val size = Files.size(tar)
      val uri = s3.upload(tar, "stats/shard-000.tar")
      val fs = s3.fileSystem()
      try {
        val before = counter(IOStatisticsSupport.retrieveIOStatistics(fs), StoreStatisticNames.ACTION_HTTP_GET_REQUEST)
        val in = fs.open(new Path(uri))
        val bytes = new Array[Byte](size.toInt)
        try in.readFully(0, bytes)
        finally in.close()
        assert(bytes.toSeq == Files.readAllBytes(tar).toSeq)

        val stream = IOStatisticsSupport.retrieveIOStatistics(in)
        assert(stream != null, "S3A's input stream publishes IOStatistics")
        assert(counter(stream, StreamStatisticNames.STREAM_READ_BYTES) == size)
        assert(counter(stream, StreamStatisticNames.STREAM_READ_OPENED) == 1L)
        assert(counter(stream, StoreStatisticNames.ACTION_HTTP_GET_REQUEST) == 1L, stream)
        // a closed stream's figures are merged into the file system's
        val gets = counter(IOStatisticsSupport.retrieveIOStatistics(fs), StoreStatisticNames.ACTION_HTTP_GET_REQUEST) - before
        assert(gets == 1L, IOStatisticsSupport.retrieveIOStatistics(fs))
        assert(counter(IOStatisticsSupport.retrieveIOStatistics(fs), StreamStatisticNames.STREAM_READ_BYTES) == size)
      } finally fs.close()
    }
  }
}
