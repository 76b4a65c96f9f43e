package dev.spindle.spark.manifest
import java.nio.file.{Files, Path, StandardCopyOption}
import java.nio.file.attribute.FileTime

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.shard.ParquetColumns
import dev.spindle.spark.testkit.{CountingFileSystem, TestFiles}

/**
 * The manifest cache without Spark (counting on this thread): its JSON and binary forms, which
 * one is read, and the change check of a brace pattern's shards.
 */
class ManifestCacheSuite extends AnyFunSuite {
  import FeedData._

  private val conf = CountingFileSystem.register(new Configuration())

  private def cache() = new ManifestCache(conf, 1000, ParquetColumns.DEFAULT,
    ShardCatalog.Counter.onThisThread(conf))

  private def load(input: String, manifest: String = null, recount: Boolean = false) =
    cache().load(input, manifest, recount)

  private def json(in: Path) = in.resolve("_spindle_manifest.json")
  private def bin(in: Path) = in.resolve("_spindle_manifest.bin")

  private def readBin(p: Path): ManifestBinary.Stored =
    ManifestBinary.fromBytes(Files.readAllBytes(p))

  /** The binding a binary form must carry for the JSON at `p` as it is now. */
  private def bindingOf(p: Path) =
    new ManifestBinary.Binding(Files.size(p), Files.getLastModifiedTime(p).toMillis)

  /** Writes `bytes` to `p` and keeps its modification time; drops Hadoop's checksum of it. */
  private def overwrite(p: Path, bytes: Array[Byte], keepTime: Boolean = true): Unit = {
    val time = Files.getLastModifiedTime(p)
    Files.write(p, bytes)
    if (keepTime) Files.setLastModifiedTime(p, time)
    Files.deleteIfExists(p.resolveSibling("." + p.getFileName + ".crc"))
  }

  test("the cache is written as JSON and as a binary form bound to it; a later load reads the binary form") {
    TestFiles.withTempDir("cache-forms") { dir =>
      val in = tars(dir.resolve("in"), Seq(3, 4))
      val created = load(in.toString)
      assert(created.status == "created" && created.location.endsWith(json(in).toString))
      val stored = readBin(bin(in))
      assert(stored.binding == bindingOf(json(in)))
      assert(stored.manifest == created.manifest)
      assert(stored.manifest == ManifestCodec.fromJson(Files.readString(json(in))))
      // the JSON turned to blanks of the same size and time: only the binary form can answer
      overwrite(json(in), Array.fill(Files.size(json(in)).toInt)(' '.toByte))
      val reused = load(in.toString)
      assert(reused.status == "reused" && reused.manifest == created.manifest)
    }
  }

  test("a damaged or truncated binary form is passed over for the JSON, and written again") {
    TestFiles.withTempDir("cache-damaged") { dir =>
      val in = tars(dir.resolve("in"), Seq(3, 4))
      val m = load(in.toString).manifest
      val good = Files.readAllBytes(bin(in))
      val damaged = good.clone()
      damaged(good.length / 2) = (damaged(good.length / 2) ^ 0x10).toByte
      val cases = Seq(
        "damaged, Hadoop's checksum catching it" -> (() => Files.write(bin(in), damaged)),
        "damaged" -> (() => overwrite(bin(in), damaged)),
        "truncated" -> (() => overwrite(bin(in), good.take(good.length - 9))),
        "empty" -> (() => overwrite(bin(in), Array.emptyByteArray)),
        "the JSON instead" -> (() => overwrite(bin(in), Files.readAllBytes(json(in)))))
      for ((what, damage) <- cases) {
        damage()
        val r = load(in.toString)
        assert(r.status == "reused" && r.manifest == m, what)
        assert(readBin(bin(in)).manifest == m, what) // written again from the JSON
        assert(readBin(bin(in)).binding == bindingOf(json(in)), what)
      }
    }
  }

  test("when the binary form and the JSON disagree, the JSON is what is read, and the binary form follows it") {
    TestFiles.withTempDir("cache-disagree") { dir =>
      val in = tars(dir.resolve("in"), Seq(3, 4))
      load(in.toString)
      val old = Files.readAllBytes(bin(in))
      // the data recounted by a version that writes only the JSON: shard-001 now holds 9 samples
      tars(in, Seq(3, 9))
      val recounted = manifest(in)
      val out = Files.newOutputStream(json(in))
      try ManifestCodec.write(recounted, out) finally out.close()
      Files.deleteIfExists(in.resolve("._spindle_manifest.json.crc"))
      assert(readBin(bin(in)).manifest.totalSamples == 7L) // the binary form still says 3 + 4
      val r = load(in.toString)
      assert(r.status == "reused" && r.manifest == recounted && r.manifest.totalSamples == 12L)
      assert(readBin(bin(in)).manifest == recounted && readBin(bin(in)).binding == bindingOf(json(in)))
      // an old binary form put back beside the new JSON (a copy, a restore): bound to another JSON
      overwrite(bin(in), old, keepTime = false)
      assert(load(in.toString).manifest == recounted)
      // another data set's binary form copied in: the same
      val other = tars(dir.resolve("other"), Seq(5))
      load(other.toString)
      Files.copy(bin(other), bin(in), StandardCopyOption.REPLACE_EXISTING)
      Files.deleteIfExists(in.resolve("._spindle_manifest.bin.crc"))
      assert(load(in.toString).manifest == recounted)
    }
  }

  test("a binary form alone is no cache: deleting the JSON counts again") {
    TestFiles.withTempDir("cache-json-gone") { dir =>
      val in = tars(dir.resolve("in"), Seq(3, 4))
      load(in.toString)
      tars(in, Seq(3, 5)) // changed, and the JSON deleted to count again, as the docs say
      Files.delete(json(in))
      val r = load(in.toString)
      assert(r.status == "created" && r.manifest.totalSamples == 8L)
      assert(readBin(bin(in)).manifest.totalSamples == 8L)
    }
  }

  test("an unreadable JSON whose binary form is stale is refused naming the JSON") {
    TestFiles.withTempDir("cache-json-bad") { dir =>
      val in = tars(dir.resolve("in"), Seq(3))
      load(in.toString)
      overwrite(json(in), "{\"format\":".getBytes, keepTime = false)
      val e = intercept[java.io.IOException](load(in.toString))
      assert(e.getMessage.startsWith("Cannot use the cached manifest ") &&
        e.getMessage.contains(json(in).toString + ": Invalid manifest: "), e.getMessage)
      assert(e.getMessage.endsWith("(delete it to count again)"))
    }
  }

  test("a cached manifest whose sample counts were edited is refused naming it, or counted again") {
    TestFiles.withTempDir("cache-edited") { dir =>
      val in = tars(dir.resolve("in"), Seq(5, 6))
      load(in.toString)
      for (edit <- Seq(4, 9)) { // lowered: its last samples would never be planned; raised
        val text = Files.readString(json(in))
        val edited = text.replace("\"samples\":6", s"\"samples\":$edit")
        assert(edited != text)
        overwrite(json(in), edited.getBytes, keepTime = false)
        Files.setLastModifiedTime(json(in), FileTime.fromMillis(System.currentTimeMillis() + 5000))
        val e = intercept[IllegalStateException](load(in.toString)).getMessage
        assert(e.startsWith(s"Invalid manifest: its shards hash to "), e)
        assert(e.contains(s"… (2 shards, ${5 + edit} samples), not to the fingerprint "), e)
        assert(e.contains(s" it records: it was edited after it was written (cached manifest "), e)
        assert(e.contains(json(in).toString + ")"), e)
        assert(e.endsWith("; set spark.spindle.feed.manifestChanged=recount to count again"), e)
        val r = load(in.toString, recount = true)
        assert(r.status.startsWith("recounted: Invalid manifest: its shards hash to "), r.status)
        assert(r.manifest.shards.asScala.map(_.samples) == Seq(5L, 6L))
        assert(load(in.toString).status == "reused")
      }
    }
  }

  test("a cache written before fingerprints were recorded is still read and reused") {
    TestFiles.withTempDir("cache-unprinted") { dir =>
      val in = tars(dir.resolve("in"), Seq(3, 4))
      val m = load(in.toString).manifest
      val text = Files.readString(json(in))
      val unprinted = text.replaceFirst(",\"fingerprint\":\"[0-9a-f]{64}\"", "")
      assert(!unprinted.contains("fingerprint") && unprinted.length < text.length, unprinted)
      overwrite(json(in), unprinted.getBytes, keepTime = false)
      Files.delete(bin(in))
      val r = load(in.toString)
      assert(r.status == "reused" && r.manifest == m)
      assert(readBin(bin(in)).manifest == m, "its binary form written again")
    }
  }

  /** Tar shards in `dir/a` and `dir/b` and the pattern naming them, on the counting file system. */
  private def patternInput(dir: Path): String = {
    tars(dir.resolve("a"), Seq(2, 3, 1))
    tars(dir.resolve("b"), Seq(1, 1, 2))
    Files.write(dir.resolve("a/notes.txt"), "not named".getBytes)
    CountingFileSystem.uri(dir) + "/{a,b}/shard-{000..002}.tar"
  }

  test("a brace pattern's cache is checked with one listing per folder, no request per shard") {
    TestFiles.withTempDir("cache-pattern") { dir =>
      val pattern = patternInput(dir)
      val m = CountingFileSystem.uri(dir.resolve("m.json"))
      assert(load(pattern, m).status == "created")
      assert(Files.exists(dir.resolve("m.bin")))
      val (r, calls) = CountingFileSystem.during(load(pattern, m))
      assert(r.status == "reused" && r.manifest.totalSamples == 10L)
      val shardCalls = calls.filter(_._2.endsWith(".tar"))
      assert(shardCalls.isEmpty, shardCalls)
      val listings = calls.filter(_._1.startsWith("list")).sorted // folders are listed at once
      assert(listings == Seq("listStatusIterator" -> dir.resolve("a").toString,
        "listStatusIterator" -> dir.resolve("b").toString), calls)
      assert(!calls.contains("open" -> dir.resolve("m.json").toString), calls) // the binary form read
      assert(calls.contains("open" -> dir.resolve("m.bin").toString), calls)
    }
  }

  test("a changed shard under a brace pattern is still found: modified, resized, missing") {
    TestFiles.withTempDir("cache-pattern-changed") { dir =>
      val pattern = patternInput(dir)
      val m = CountingFileSystem.uri(dir.resolve("m.json"))
      load(pattern, m)
      val touched = dir.resolve("b/shard-001.tar")
      val time = Files.getLastModifiedTime(touched)
      Files.setLastModifiedTime(touched, FileTime.fromMillis(time.toMillis - 60000))
      val modified = intercept[IllegalStateException](load(pattern, m)).getMessage
      assert(modified.contains(s"counting:$touched: modified"), modified)
      assert(modified.contains("(cached manifest counting:" + dir.resolve("m.json")), modified)
      Files.setLastModifiedTime(touched, time)
      assert(load(pattern, m).status == "reused")

      tars(dir.resolve("a"), Seq(2, 3, 4)) // a/shard-002.tar rewritten with 4 samples
      val resized = intercept[IllegalStateException](load(pattern, m)).getMessage
      assert(resized.contains(s"counting:${dir.resolve("a/shard-002.tar")}: size"), resized)
      val recounted = load(pattern, m, recount = true)
      assert(recounted.status == "recounted" && recounted.manifest.totalSamples == 13L)
      assert(load(pattern, m).status == "reused")

      Files.delete(dir.resolve("b/shard-000.tar"))
      val missing = intercept[IllegalStateException](load(pattern, m)).getMessage
      assert(missing.contains(s"counting:${dir.resolve("b/shard-000.tar")}: missing"), missing)
      assert(missing.contains("1 shards changed, 0 files added"), missing)
    }
  }
}
