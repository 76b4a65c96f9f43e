package dev.spindle.spark.shard

import java.io.{IOException, OutputStream}
import java.nio.file.{Files, Path}
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.Random

import dev.spindle.spark.config.SpindleConfig
import dev.spindle.spark.testkit.{CountingFileSystem, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, Path => HPath}
import org.apache.spark.SparkConf
import org.scalatest.funsuite.AnyFunSuite

/**
 * The executor-local shard cache on real files: shards on the counting file system (which records
 * every byte read from storage), the cache in a local folder, each test a fresh cache instance as
 * an executor JVM would make it (a second instance on the same folder is a restarted executor).
 */
class ShardCacheSuite extends AnyFunSuite {
  private val conf = CountingFileSystem.register(new Configuration())

  /** A shard file of `bytes` random bytes named `name`; its Shard at a counting: URI. */
  private def shard(dir: Path, name: String, bytes: Int, seed: Int = 1): (Shard, Array[Byte]) = {
    val content = new Array[Byte](bytes)
    new Random(seed).nextBytes(content)
    val f = dir.resolve(name)
    Files.write(f, content)
    (new Shard(CountingFileSystem.uri(f), ShardFormat.TAR, bytes,
      Files.getLastModifiedTime(f).toMillis, 1, java.util.List.of()), content)
  }

  private def storage(s: Shard): ShardCache.Storage = () => {
    val p = new HPath(s.uri())
    p.getFileSystem(conf).open(p)
  }

  /** Reads the shard through `cache`, whole, returning its bytes. */
  private def read(cache: ShardCache, s: Shard, max: Long, tally: CacheTally): Array[Byte] = {
    val in = cache.open(s, conf, max, tally, storage(s))
    try in.readAllBytes() finally in.close()
  }

  private def stored(dir: Path, suffix: String): Seq[Path] =
    Files.list(dir).iterator().asScala.filter(_.toString.endsWith(suffix)).toSeq

  private def withDirs[T](body: (Path, Path) => T): T =
    TestFiles.withTempDir("cache-in")(in => TestFiles.withTempDir("cache")(c => body(in, c)))

  test("a second open reads the local copy: the shard is read from storage once, whole") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "a.tar", 300000)
      CountingFileSystem.reset()
      val cache = new ShardCache(dir)
      val t = new CacheTally()
      assert(read(cache, s, 1L << 30, t) sameElements content)
      assert(read(cache, s, 1L << 30, t) sameElements content)
      assert(CountingFileSystem.bytesRead("a.tar") == content.length)
      val c = t.counts()
      assert((c.hits, c.misses, c.bytesFetched, c.bytesServed) == (1L, 1L, 300000L, 600000L), c)
      assert(c.unusable == null && c.corrupt == 0 && c.evictions == 0)
      assert(stored(dir, ".data").size == 1 && stored(dir, ".crc").size == 1)
      assert(stored(dir, ".tmp").isEmpty)
    }
  }

  test("positioned reads and seeks of a cached shard return the shard's bytes") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "p.tar", 100000)
      val cache = new ShardCache(dir)
      read(cache, s, 1L << 30, new CacheTally())
      val t = new CacheTally()
      val local: FSDataInputStream = cache.open(s, conf, 1L << 30, t, storage(s))
      try {
        val buf = new Array[Byte](1000)
        local.readFully(50000, buf)
        assert(buf sameElements content.slice(50000, 51000))
        local.seek(99990)
        assert(local.readAllBytes() sameElements content.slice(99990, 100000))
        assert(local.read(100000, buf, 0, 10) == -1)
      } finally local.close()
      assert(t.counts().hits == 1 && t.counts().bytesServed == 1010)
    }
  }

  test("a changed shard (size or modification time) is another entry") {
    def tar(uri: String, bytes: Long, time: Long) =
      new Shard(uri, ShardFormat.TAR, bytes, time, 1, java.util.List.of())
    val keys = Seq(tar("s3a://b/x.tar", 10, 1000), tar("s3a://b/x.tar", 10, 1001),
      tar("s3a://b/x.tar", 11, 1000), tar("s3a://b/y.tar", 10, 1000)).map(ShardCache.key)
    assert(keys.distinct.size == 4)
    assert(ShardCache.key(tar("s3a://b/x.tar", 10, 1000)) == keys.head)
    assert(keys.forall(_.matches("[0-9a-f]{32}")))
  }

  test("concurrent openers of one shard wait for one fetch") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "c.tar", 8 << 20)
      CountingFileSystem.reset()
      val cache = new ShardCache(dir)
      val tallies = Seq.fill(8)(new CacheTally())
      val start = new CountDownLatch(1)
      val pool = Executors.newFixedThreadPool(8)
      try {
        val got = tallies.map(t => pool.submit(() => { start.await(); read(cache, s, 1L << 30, t) }))
        start.countDown()
        got.foreach(f => assert(f.get(60, TimeUnit.SECONDS) sameElements content))
      } finally pool.shutdownNow()
      assert(CountingFileSystem.bytesRead("c.tar") == content.length, "one fetch from storage")
      val c = tallies.map(_.counts()).reduce(_ plus _)
      assert((c.misses, c.hits, c.bytesFetched) == (1L, 7L, content.length.toLong), c)
    }
  }

  test("LRU eviction keeps the folder within its bound and evicts the least recently used") {
    withDirs { (in, dir) =>
      val shards = Seq("a", "b", "c").map(n => shard(in, n + ".tar", 100000, n.head.toInt)._1)
      val max = 250000L
      val cache = new ShardCache(dir)
      val t = new CacheTally()
      def use(i: Int): Unit = { read(cache, shards(i), max, t); Thread.sleep(20) }
      use(0); use(1); use(0) // a used after b: b is the least recently used
      CountingFileSystem.reset()
      use(2)
      assert(t.counts().evictions == 1)
      assert(stored(dir, ".data").map(p => Files.size(p)).sum <= max)
      use(0)
      assert(CountingFileSystem.bytesRead("a.tar") == 0, "a was kept")
      use(1)
      assert(CountingFileSystem.bytesRead("b.tar") == 100000, "b was evicted and fetched again")
      assert(t.counts().evictions == 2 && t.counts().misses == 4)
      assert(stored(dir, ".data").map(p => Files.size(p)).sum <= max)
    }
  }

  test("an entry open by a reader is not evicted under it; a shard that cannot fit is read direct") {
    withDirs { (in, dir) =>
      val (a, aBytes) = shard(in, "a.tar", 100000, 1)
      val (b, bBytes) = shard(in, "b.tar", 100000, 2)
      val (big, bigBytes) = shard(in, "big.tar", 200000, 3)
      val max = 150000L
      val cache = new ShardCache(dir)
      val t = new CacheTally()
      read(cache, a, max, t)
      val open = cache.open(a, conf, max, t, storage(a))
      try {
        assert(read(cache, b, max, t) sameElements bBytes) // no room while a is open: read direct
        assert(t.counts().evictions == 0 && t.counts().misses == 1)
        assert(open.readAllBytes() sameElements aBytes)
      } finally open.close()
      assert(read(cache, b, max, t) sameElements bBytes) // a closed: evicted for b
      assert(t.counts().evictions == 1 && t.counts().misses == 2)
      CountingFileSystem.reset()
      assert(read(cache, big, max, t) sameElements bigBytes)
      assert(t.counts().misses == 2 && t.counts().evictions == 1, "over the bound: not cached")
      assert(CountingFileSystem.bytesRead("big.tar") == bigBytes.length)
    }
  }

  test("a corrupted entry is found by a restarted executor, deleted, fetched again and counted") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "k.tar", 200000)
      read(new ShardCache(dir), s, 1L << 30, new CacheTally())
      val data = stored(dir, ".data").head
      val bytes = Files.readAllBytes(data)
      bytes(123456) = (bytes(123456) ^ 0x10).toByte // one bit flipped on disk
      Files.write(data, bytes)
      CountingFileSystem.reset()
      val t = new CacheTally()
      val restarted = new ShardCache(dir) // a new JVM verifies an entry once, on first use
      assert(read(restarted, s, 1L << 30, t) sameElements content, "never served corrupt")
      assert(read(restarted, s, 1L << 30, t) sameElements content)
      val c = t.counts()
      assert((c.corrupt, c.misses, c.hits) == (1L, 1L, 1L), c)
      assert(CountingFileSystem.bytesRead("k.tar") == content.length)
      assert(Files.readAllBytes(stored(dir, ".data").head) sameElements content)
    }
  }

  test("an entry whose checksum file is missing or whose size is wrong is not served") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "m.tar", 50000)
      read(new ShardCache(dir), s, 1L << 30, new CacheTally())
      Files.write(stored(dir, ".data").head, content.take(40000)) // truncated in place
      val t = new CacheTally()
      assert(read(new ShardCache(dir), s, 1L << 30, t) sameElements content)
      assert(t.counts().corrupt == 1 && t.counts().misses == 1)
    }
  }

  test("a killed writer's temporary file and lone checksum are never used, and are cleaned up") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "t.tar", 100000)
      val key = ShardCache.key(s)
      Files.write(dir.resolve(key + ".tmp"), content.take(60000)) // killed mid-fetch
      Files.writeString(dir.resolve(key + ".crc"), "crc32c 00000000 bytes 100000\nx\n")
      CountingFileSystem.reset()
      val t = new CacheTally()
      val cache = new ShardCache(dir)
      assert(!Files.exists(dir.resolve(key + ".tmp")), "an unfinished fetch's file is deleted")
      assert(read(cache, s, 1L << 30, t) sameElements content)
      assert(t.counts().misses == 1 && t.counts().hits == 0 && t.counts().corrupt == 0)
      assert(CountingFileSystem.bytesRead("t.tar") == content.length)
      assert(stored(dir, ".tmp").isEmpty)
    }
  }

  test("an unusable cache folder degrades to direct reads, saying why") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "u.tar", 10000)
      val notADir = Files.write(dir.resolve("plain-file"), Array[Byte](1))
      val t = new CacheTally()
      val cache = new ShardCache(notADir.resolve("cache"))
      assert(read(cache, s, 1L << 30, t) sameElements content)
      assert(read(cache, s, 1L << 30, t) sameElements content)
      val c = t.counts()
      assert(c.hits == 0 && c.misses == 0)
      assert(c.unusable != null && c.unusable.contains(notADir.resolve("cache").toString), c)
    }
  }

  test("a disk that fills up mid-fetch: the read goes to storage, nothing half-written is left") {
    withDirs { (in, dir) =>
      val (s, content) = shard(in, "f.tar", 3 << 20)
      val full: CacheDir.Outputs = f => new OutputStream {
        private val out = Files.newOutputStream(f)
        private var n = 0L
        override def write(b: Int): Unit = write(Array(b.toByte), 0, 1)
        override def write(b: Array[Byte], off: Int, len: Int): Unit = {
          if (n + len > (1 << 20)) throw new IOException("No space left on device")
          out.write(b, off, len); n += len
        }
        override def close(): Unit = out.close()
      }
      val t = new CacheTally()
      val cache = new ShardCache(dir, full)
      assert(read(cache, s, 1L << 30, t) sameElements content)
      val c = t.counts()
      assert(c.misses == 0 && c.unusable.contains("No space left on device"), c)
      assert(stored(dir, ".data").isEmpty && stored(dir, ".tmp").isEmpty && stored(dir, ".crc").isEmpty)
    }
  }

  test("settings: the registry's keys and defaults, the folder under Spark's first local dir") {
    assert(CacheSettings.ENABLED_KEY == SpindleConfig.IO_CACHE.key())
    assert(CacheSettings.MAX_BYTES_KEY == SpindleConfig.IO_CACHE_MAX_BYTES.key())
    assert(CacheSettings.DIR_KEY == SpindleConfig.IO_CACHE_DIR.key())
    assert(!SpindleConfig.IO_CACHE.defaultParsed())
    assert(SpindleConfig.IO_CACHE_MAX_BYTES.defaultParsed() == CacheSettings.DEFAULT_MAX_BYTES)
    val base = new SparkConf(false).set("spark.local.dir", "/disk1/spark,/disk2/spark")
    assert(!CacheSettings.of(base).enabled())
    val on = CacheSettings.of(base.clone().set("spark.spindle.io.cache", "true"))
    if (System.getenv("SPARK_LOCAL_DIRS") == null) {
      assert(on.dir() == java.nio.file.Paths.get("/disk1/spark/spindle-shard-cache"))
    }
    assert(on.maxBytes() == (20L << 30))
    val standalone = Map("SPARK_EXECUTOR_DIRS" -> "/w/app-1/executor-0")
    assert(CacheSettings.defaultDir(base, k => standalone.getOrElse(k, null)) ==
      java.nio.file.Paths.get("/disk1/spark/spindle-shard-cache"), "not the application's folder")
    val env = standalone + ("SPARK_LOCAL_DIRS" -> "/nvme/a,/nvme/b")
    assert(CacheSettings.defaultDir(base, k => env.getOrElse(k, null)) ==
      java.nio.file.Paths.get("/nvme/a/spindle-shard-cache"))
    val set = CacheSettings.of(base.clone().set("spark.spindle.io.cache", "true")
      .set("spark.spindle.io.cache.dir", "/x/c").set("spark.spindle.io.cache.maxBytes", "1000"))
    assert(set == new CacheSettings(true, 1000, java.nio.file.Paths.get("/x/c")))
    assert(intercept[IllegalArgumentException](CacheSettings.of(base.clone()
      .set("spark.spindle.io.cache", "true").set("spark.spindle.io.cache.maxBytes", "0")))
      .getMessage == "Invalid spark.spindle.io.cache.maxBytes: 0 (must be > 0)")
  }
}
