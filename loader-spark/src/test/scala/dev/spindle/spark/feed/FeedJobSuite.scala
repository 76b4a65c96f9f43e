package dev.spindle.spark.feed

import java.nio.file.{Files, Path}
import java.nio.file.attribute.FileTime

import scala.jdk.CollectionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.plan.Remainder
import dev.spindle.spark.testkit.{SparkFixture, TarBlocks, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart, SparkListenerTaskEnd}
import org.scalatest.funsuite.AnyFunSuite

/** The feed job in local mode: determinism, quarantine, manifest caching. */
class FeedJobSuite extends AnyFunSuite with SparkFixture with FeedProperties {
  import FeedData._

  private def feed(in: Path, args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in.toString, "--size", "8") ++ args).toArray)

  test("per-rank digests equal the plan's with 1, 2 and 4 partitions and 1, 2 and 4 threads") {
    TestFiles.withTempDir("feed-det") { dir =>
      checkDigests(tars(dir.resolve("in"), Counts).toString, Seq(1, 2, 4), Seq(1, 2, 4))
    }
  }

  test("a bad sample is quarantined with its index, its row stands in, and counts stay equal") {
    TestFiles.withTempDir("feed-bad") { dir =>
      val in = tars(dir.resolve("in"), Seq(13, 7, 21), bad = Set((1, 3), (2, 0)))
      val m = manifest(in)
      val r = feed(in, "--world-size", "2", "--batch-size", "4", "--remainder", "PAD",
        "--conf", "spark.spindle.maxFailures=5")
      assert(digests(r, 0) == planDigests(m, spec(0, 0, 2, 4, Remainder.PAD)))
      assert(ranks(r).map(_("batches")) == Seq(6, 6)) // ceil(41 / 8) batches of 4 per rank
      assert(ranks(r).map(_("samples").asInstanceOf[Long]).sum == 41L) // every sample, once
      assert(ranks(r).map(_("substituted").asInstanceOf[Long]).sum >= 2L)
      val q = quarantine(r)
      assert(q.map(e => (e("key").toString, e("index").asInstanceOf[Number].longValue)) ==
        Seq(("s1_0003", 16L), ("s2_0000", 20L)))
      assert(q.forall(_("reason").toString.startsWith("cannot decode")))
      assert(q.head("shard").toString.endsWith("shard-001.tar"))
      assert(r.get("failures") == 2L)
      assert(r.get("quarantine_total") == 2L && r.get("quarantine_truncated") == false)
      val timeline = r.get("timeline").asInstanceOf[java.util.List[java.util.Map[String, Object]]]
      assert(!timeline.isEmpty, "the report's timeline has points")
      val last = timeline.get(timeline.size - 1)
      assert(last.get("quarantined") == 2L && last.get("samples") == r.get("samples_read"), last)
      assert(last.get("bytes") == r.get("bytes_in"), last)
      val reportFile = dir.resolve("feed.json")
      r.writeTo(reportFile)
      assert(java.nio.file.Files.readAllLines(dir.resolve("feed.quarantine.jsonl")).size == 2)

      val e = intercept[IllegalStateException](feed(in, "--world-size", "2", "--batch-size", "4",
        "--conf", "spark.spindle.maxFailures=1"))
      assert(e.getMessage.contains("Failure budget exceeded: 2 of 40 samples quarantined"))
      assert(e.getMessage.contains("[s1_0003]"))
    }
  }

  test("the manifest is cached next to the data, reused, and refused or recounted when shards change") {
    TestFiles.withTempDir("feed-manifest") { dir =>
      val in = tars(dir.resolve("in"), Seq(9, 9))
      val cache = in.resolve("_spindle_manifest.json")
      def status(r: FeedReport) = r.get("manifest").asInstanceOf[java.util.Map[String, AnyRef]].get("status")
      val args = Seq("--world-size", "2", "--batch-size", "3")
      assert(status(feed(in, args: _*)) == "created")
      assert(Files.exists(cache))
      assert(status(feed(in, args: _*)) == "reused")

      val shard = in.resolve("shard-001.tar")
      Files.setLastModifiedTime(shard, FileTime.fromMillis(Files.getLastModifiedTime(shard).toMillis - 60000))
      val touched = intercept[IllegalStateException](feed(in, args: _*))
      assert(touched.getMessage.contains("shard-001.tar: modified"))

      tars(dir.resolve("in"), Seq(9, 12)) // shard-001 rewritten with more samples
      val changed = intercept[IllegalStateException](feed(in, args: _*))
      assert(changed.getMessage.contains("The data changed since the manifest"))
      assert(changed.getMessage.contains("shard-001.tar: size"))
      val recounted = feed(in, (args ++ Seq("--conf", "spark.spindle.feed.manifestChanged=recount")): _*)
      assert(status(recounted) == "recounted")
      assert(recounted.get("manifest").asInstanceOf[java.util.Map[String, AnyRef]].get("samples") == 21L)
      assert(status(feed(in, args: _*)) == "reused")

      val elsewhere = dir.resolve("elsewhere/m.json")
      val r = feed(in, (args ++ Seq("--manifest", elsewhere.toString)): _*)
      assert(status(r) == "created" && Files.exists(elsewhere))

      // a cache written by an earlier version (format 1, its own tar counter) is counted again
      Files.writeString(cache, Files.readString(cache).replace("spindle-manifest/4", "spindle-manifest/1"))
      Files.deleteIfExists(in.resolve("._spindle_manifest.json.crc")) // Hadoop's checksum of it
      val outdated = status(feed(in, args: _*)).toString
      assert(outdated.startsWith("recounted: Outdated manifest"), outdated)
      assert(Files.readString(cache).contains("spindle-manifest/4"))
      assert(status(feed(in, args: _*)) == "reused")
    }
  }

  test("a cached manifest whose sample count was lowered by hand is refused, not fed short") {
    TestFiles.withTempDir("feed-edited") { dir =>
      val in = tars(dir.resolve("in"), Seq(9, 9))
      val cache = in.resolve("_spindle_manifest.json")
      val args = Seq("--world-size", "2", "--batch-size", "3")
      assert(feed(in, args: _*).get("images") == 18L)
      // shard-001 said to hold 7: its last 2 samples would be in no plan, and nothing would say so
      val text = Files.readString(cache)
      val edited = text.replaceFirst("(\"path\":\"shard-001.tar\"[^}]*\"samples\":)9", "$17")
      assert(edited != text)
      Files.writeString(cache, edited)
      Files.deleteIfExists(in.resolve("._spindle_manifest.json.crc"))
      Files.setLastModifiedTime(cache, FileTime.fromMillis(System.currentTimeMillis() + 5000))
      val e = intercept[IllegalStateException](feed(in, args: _*)).getMessage
      assert(e.contains("(2 shards, 16 samples), not to the fingerprint ") &&
        e.contains("it was edited after it was written (cached manifest ") && e.contains(cache.toString), e)
      val recounted = feed(in, (args ++ Seq("--conf", "spark.spindle.feed.manifestChanged=recount")): _*)
      assert(recounted.get("images") == 18L)
    }
  }

  /** Each feed epoch task's serialized result (Spark's `resultSize`) while `run` runs. */
  private def resultSizes(run: => Unit): Seq[Long] = {
    val sizes = new java.util.concurrent.ConcurrentLinkedQueue[Long]()
    val feedStages = java.util.concurrent.ConcurrentHashMap.newKeySet[Int]()
    val probe = new java.util.concurrent.CountDownLatch(1)
    val listener = new SparkListener {
      override def onJobStart(e: SparkListenerJobStart): Unit = {
        val group = Option(e.properties).map(_.getProperty("spark.jobGroup.id", "")).getOrElse("")
        if (group.startsWith("spindle-feed-")) e.stageIds.foreach(id => feedStages.add(id))
        if (group == "probe") probe.countDown()
      }
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit =
        if (feedStages.contains(e.stageId)) sizes.add(e.taskMetrics.resultSize)
    }
    spark.sparkContext.addSparkListener(listener)
    try {
      run
      spark.sparkContext.setJobGroup("probe", "probe") // events arrive in order: once it starts,
      try spark.sparkContext.parallelize(Seq(1), 1).count() // every earlier task's end was seen
      finally spark.sparkContext.clearJobGroup()
      assert(probe.await(30, java.util.concurrent.TimeUnit.SECONDS))
    } finally spark.sparkContext.removeSparkListener(listener)
    sizes.asScala.toSeq
  }

  test("a feed task's result is O(its slices): as small for 996 delivered samples as for 4") {
    TestFiles.withTempDir("feed-result") { dir =>
      val in = tars(dir.resolve("in"), Seq(500, 500))
      val args = Seq("--world-size", "1", "--batch-size", "4", "--partitions", "1")
      val one = resultSizes(feed(in, (args ++ Seq("--stop-after-batches", "1", "--save-state",
        dir.resolve("state.json").toString)): _*))
      var r: FeedReport = null
      val all = resultSizes { r = feed(in, args: _*) }
      assert(r.get("images") == 1000L && digests(r, 0) == planDigests(manifest(in), spec(0, 0, 1, 4)))
      info(s"task result: ${one.mkString} bytes after 1 batch of 4, ${all.mkString} after 250 batches")
      assert(one.size == 1 && all.size == 1, s"$one $all")
      // 249 more batches: 7,968 more bytes of indices alone, had the task shipped them
      assert(math.abs(all.head - one.head) < 256, s"$one $all")
      assert(all.head < 8192, s"$all")
    }
  }

  private def keysAndIndices(q: Seq[Map[String, AnyRef]]): Seq[(String, Long)] =
    q.map(e => (e("key").toString, e("index").asInstanceOf[Number].longValue))

  test("a shard with a negative size field: its damage is one quarantined sample, not a failure") {
    TestFiles.withTempDir("feed-damaged") { dir =>
      val in = tars(dir.resolve("in"), Seq(13, 7))
      val before = (0 until 3).flatMap(j => Seq(TarBlocks.file(f"s1_$j%04d.png", png(1000 + j)),
        TarBlocks.file(f"s1_$j%04d.cls", ascii("1"))))
      val bad = TarBlocks.base256Size(TarBlocks.header(ascii("s1_0003.png"), 0), -1)
      Files.write(in.resolve("shard-001.tar"),
        TarBlocks.tar(before ++ Seq(bad, TarBlocks.file("s1_0004.png", png(1004))): _*))
      val m = manifest(in)
      assert(m.totalSamples == 17L) // 13 + 3 + the damage
      val r = feed(in, "--world-size", "2", "--batch-size", "4", "--remainder", "PAD",
        "--conf", "spark.spindle.maxFailures=3")
      assert(digests(r, 0) == planDigests(m, spec(0, 0, 2, 4, Remainder.PAD)))
      assert(ranks(r).map(_("samples").asInstanceOf[Long]).sum == 17L)
      val q = quarantine(r)
      assert(keysAndIndices(q) == Seq(("(rest of shard)", 16L)))
      assert(q.head("reason").toString.contains("entry 's1_0003.png': size field is negative"))
      assert(r.get("failures") == 1L)
    }
  }

  test("a shard damaged after it was counted: each planned sample it no longer yields is listed") {
    TestFiles.withTempDir("feed-changed") { dir =>
      val in = tars(dir.resolve("in"), Seq(8, 8))
      val m = manifest(in)
      val args = Seq("--world-size", "2", "--batch-size", "2", "--conf", "spark.spindle.maxFailures=10")
      feed(in, args: _*) // caches the manifest: 8 samples in shard-001
      val shard = in.resolve("shard-001.tar")
      val mtime = Files.getLastModifiedTime(shard)
      val bytes = Files.readAllBytes(shard)
      bytes(bytes.indexOfSlice(ascii("s1_0003.png"))) = 'X'.toByte // its header's checksum fails
      Files.write(shard, bytes)
      Files.setLastModifiedTime(shard, mtime)
      val r = feed(in, args: _*)
      assert(r.get("manifest").asInstanceOf[java.util.Map[String, AnyRef]].get("status") == "reused")
      val q = quarantine(r)
      assert(keysAndIndices(q) ==
        Seq(("(rest of shard)", 11L)) ++ (4 until 8).map(p => (s"(unread #$p)", 8L + p)))
      assert(q.forall(_("shard").toString.endsWith("shard-001.tar")))
      assert(q(1)("reason").toString.startsWith("not read: the shard is damaged before it: "))
      assert(q(1)("reason").toString.contains("checksum"))
      assert(ranks(r).map(_("samples").asInstanceOf[Long]).sum == 16L)
      assert(digests(r, 0) == planDigests(m, spec(0, 0, 2, 2)))
      assert(r.get("failures") == 5L)
    }
  }
}
