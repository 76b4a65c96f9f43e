package dev.spindle.spark.shard

import java.net.URI
import java.nio.file.{Files, Path}
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, RawLocalFileSystem, RemoteIterator}
import org.scalatest.funsuite.AnyFunSuite

import dev.spindle.spark.testkit.{CountingFileSystem, TestFiles}

/** A brace pattern's files are found by listing their folders, not by a request per file. */
class PatternFilesSuite extends AnyFunSuite {
  private val conf = CountingFileSystem.register(new Configuration())

  private def file(p: Path, bytes: Int): Path = {
    Files.createDirectories(p.getParent)
    Files.write(p, new Array[Byte](bytes))
  }

  private def expand(pattern: String) = PatternInput.expand(pattern, conf).uris()

  private def byOp(calls: Seq[(String, String)]) = calls.groupBy(_._1).map { case (k, v) => k -> v.size }

  test("one listing per folder of the names, no status request per file, facts as a status gives") {
    TestFiles.withTempDir("pattern-list") { dir =>
      for (d <- Seq("a", "b"); i <- 0 until 10) file(dir.resolve(f"$d/shard-$i%03d.tar"), 100 + i)
      file(dir.resolve("a/stray.txt"), 5)
      file(dir.resolve("b/shard-999.tar"), 5) // not named
      val uris = expand(CountingFileSystem.uri(dir) + "/{a,b}/shard-{000..009}.tar")
      val (looked, calls) = CountingFileSystem.during(PatternFiles.look(uris, conf))
      assert(byOp(calls) == Map("listStatusIterator" -> 2), calls)
      assert(calls.map(_._2).toSet == Set(dir.resolve("a").toString, dir.resolve("b").toString))
      assert(looked.foldersListed == 2 && looked.filesStatted == 0 && looked.entriesListed <= 22)
      val files = looked.files.asScala
      assert(files.map(_.uri) == uris.asScala)
      for (f <- files) {
        val local = Path.of(new org.apache.hadoop.fs.Path(f.uri).toUri.getPath)
        assert(f.refused == null && f.samples == -1)
        assert(f.bytes == Files.size(local))
        assert(f.modificationTime == Files.getLastModifiedTime(local).toMillis)
      }
    }
  }

  test("a missing name, a missing folder and a name that is a folder are refused as a status would") {
    TestFiles.withTempDir("pattern-missing") { dir =>
      file(dir.resolve("a/s-0.tar"), 1)
      Files.createDirectories(dir.resolve("a/s-1.tar"))
      val uris = expand(CountingFileSystem.uri(dir) + "/{a,gone}/s-{0..2}.tar")
      val (looked, calls) = CountingFileSystem.during(PatternFiles.look(uris, conf))
      assert(!calls.exists(_._1 == "getFileStatus"), calls)
      val refused = looked.files.asScala.map(f => f.uri.substring(f.uri.indexOf(dir.getFileName.toString))
        -> Option(f.refused).map(_.substring(f.uri.length + 1)))
      val d = dir.getFileName.toString
      assert(refused == Seq(s"$d/a/s-0.tar" -> None, s"$d/a/s-1.tar" -> Some("is a folder, not a shard file"),
        s"$d/a/s-2.tar" -> Some("does not exist"), s"$d/gone/s-0.tar" -> Some("does not exist"),
        s"$d/gone/s-1.tar" -> Some("does not exist"), s"$d/gone/s-2.tar" -> Some("does not exist")))
    }
  }

  test("a folder of far more other files is listed only to its budget, then its names are stat'ed") {
    TestFiles.withTempDir("pattern-crowded") { dir =>
      for (i <- 0 until 3) file(dir.resolve(s"d/s-$i.tar"), 10 + i)
      for (i <- 0 until 200) file(dir.resolve(s"d/other-$i.bin"), 1)
      val uris = expand(CountingFileSystem.uri(dir) + "/d/s-{0..2}.tar")
      // 1 entry per name: the listing stops after 3 of its 203 entries (all 3 names among the
      // first 3 in the folder's order: a chance of 1 in 1.4 million)
      val (looked, calls) = CountingFileSystem.during(PatternFiles.look(uris, conf, 1))
      assert(looked.entriesListed == 3 && looked.foldersListed == 1 && looked.filesStatted >= 1, looked)
      assert(byOp(calls) == Map("listStatusIterator" -> 1, "getFileStatus" -> looked.filesStatted), calls)
      assert(looked.files.asScala.map(_.bytes) == Seq(10L, 11L, 12L))
      // with the default budget (1,000 entries per name) the one listing finds them all
      val (all, calls2) = CountingFileSystem.during(PatternFiles.look(uris, conf))
      assert(byOp(calls2) == Map("listStatusIterator" -> 1) && all.filesStatted == 0, calls2)
      assert(all.files.asScala.map(_.bytes) == Seq(10L, 11L, 12L))
    }
  }

  test("folders are listed at the same time, up to THREADS, and each file is still found once") {
    TestFiles.withTempDir("pattern-parallel") { dir =>
      val folders = PatternFiles.THREADS + 4
      for (d <- 0 until folders; i <- 0 until 3) file(dir.resolve(f"d$d%02d/s-$i.tar"), 10 * d + i)
      val gated = new Configuration()
      gated.set("fs.gated.impl", classOf[GatedFileSystem].getName)
      gated.setBoolean("fs.gated.impl.disable.cache", true)
      // each listing waits until PatternFiles.THREADS listings have begun: one folder after
      // another, the first would wait out the 60 s and the test fail
      GatedFileSystem.reset(PatternFiles.THREADS)
      val uris = PatternInput.expand("gated://" + dir + s"/d{00..${folders - 1}}/s-{0..2}.tar", gated).uris()
      val looked = PatternFiles.look(uris, gated)
      assert(GatedFileSystem.waitedOut.get == 0, "listings waited out the gate: not concurrent")
      assert(GatedFileSystem.maxAtOnce.get == PatternFiles.THREADS)
      assert(looked.foldersListed == folders && looked.filesStatted == 0)
      assert(looked.files.asScala.map(_.uri) == uris.asScala)
      assert(looked.files.asScala.map(_.bytes) ==
        (for (d <- 0 until folders; i <- 0 until 3) yield (10 * d + i).toLong))
    }
  }

  test("a folder that cannot be listed fails the look with its error") {
    TestFiles.withTempDir("pattern-error") { dir =>
      for (d <- Seq("a", "b", "c")) file(dir.resolve(s"$d/s-0.tar"), 1)
      val gated = new Configuration()
      gated.set("fs.gated.impl", classOf[GatedFileSystem].getName)
      gated.setBoolean("fs.gated.impl.disable.cache", true)
      GatedFileSystem.reset(1, failOn = "/b")
      val uris = PatternInput.expand("gated://" + dir + "/{a,b,c}/s-0.tar", gated).uris()
      val e = intercept[java.io.IOException](PatternFiles.look(uris, gated))
      assert(e.getMessage == s"cannot list ${dir}/b", e)
    }
  }
}

/**
 * The local file system under `gated:`, whose listings each wait (up to 60 s, once) until a set
 * number of them have begun, counting how many run at once; one folder's listing may be made to
 * fail.
 */
class GatedFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("gated:///")
  override def getScheme: String = "gated"

  override def listStatusIterator(p: org.apache.hadoop.fs.Path): RemoteIterator[FileStatus] = {
    import GatedFileSystem._
    if (failOn != null && p.toUri.getPath.endsWith(failOn)) {
      throw new java.io.IOException(s"cannot list ${p.toUri.getPath}")
    }
    val now = running.incrementAndGet()
    maxAtOnce.accumulateAndGet(now, Math.max)
    gate.countDown()
    try {
      if (!gate.await(60, TimeUnit.SECONDS)) {
        waitedOut.incrementAndGet()
        while (gate.getCount > 0) gate.countDown() // the others need not wait it out again
      }
      super.listStatusIterator(p)
    } finally running.decrementAndGet()
  }
}

object GatedFileSystem {
  @volatile private var gate = new CountDownLatch(0)
  @volatile private var failOn: String = _
  private val running = new AtomicInteger()
  val maxAtOnce = new AtomicInteger()
  val waitedOut = new AtomicInteger()

  def reset(listingsAtOnce: Int, failOn: String = null): Unit = {
    gate = new CountDownLatch(listingsAtOnce)
    this.failOn = failOn
    running.set(0)
    maxAtOnce.set(0)
    waitedOut.set(0)
  }
}
