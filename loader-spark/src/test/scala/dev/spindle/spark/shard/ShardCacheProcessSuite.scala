package dev.spindle.spark.shard

import java.io.{BufferedReader, InputStreamReader}
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit
import java.util.zip.CRC32

import scala.util.Random

import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HPath}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The shard cache shared by several executor JVMs on one node ([[CacheChild]] processes on one
 * folder): one fetch for all of them, and a lock held by a killed executor does not block the
 * others (the OS drops it with the process).
 */
class ShardCacheProcessSuite extends AnyFunSuite {
  private def child(args: String*): ProcessBuilder = {
    val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
    val bin = Path.of(System.getProperty("java.home"), "bin", "java").toString
    new ProcessBuilder((Seq(bin, "-cp", cp, CacheChild.getClass.getName.stripSuffix("$")) ++ args): _*)
      .redirectError(ProcessBuilder.Redirect.INHERIT)
  }

  private def shard(dir: Path, bytes: Int): (Shard, Long) = {
    val content = new Array[Byte](bytes)
    new Random(5).nextBytes(content)
    val f = Files.write(dir.resolve("s.tar"), content)
    val crc = new CRC32()
    crc.update(content)
    (new Shard(f.toUri.toString, ShardFormat.TAR, bytes, Files.getLastModifiedTime(f).toMillis, 1,
      java.util.List.of()), crc.getValue)
  }

  private def args(dir: Path, s: Shard): Seq[String] =
    Seq(dir.toString, s.uri(), s.bytes().toString, s.modificationTime().toString)

  test("three executor JVMs opening one shard at once fetch it once") {
    TestFiles.withTempDir("cache-procs") { dir =>
      val (s, crc) = shard(dir, 16 << 20)
      val cache = dir.resolve("cache")
      val go = dir.resolve("go")
      val procs = (0 until 3).map { i =>
        child(Seq("open") ++ args(cache, s) ++ Seq(dir.resolve(s"ready-$i").toString, go.toString): _*).start()
      }
      try {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        while ((0 until 3).exists(i => !Files.exists(dir.resolve(s"ready-$i"))) && System.nanoTime() < deadline)
          Thread.sleep(5)
        Files.createFile(go)
        val lines = procs.map { p =>
          val out = new String(p.getInputStream.readAllBytes()).trim.split("\n").last
          assert(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0)
          out.split(" ").toSeq
        }
        assert(lines.map(_(0).toLong).sum == 1, s"one fetch among the processes: $lines")
        assert(lines.map(_(1).toLong).sum == 2, lines)
        assert(lines.forall(l => l(2) == "0" && l(3).toLong == crc), lines)
      } finally procs.foreach(_.destroyForcibly())
    }
  }

  test("a lock held by a killed executor does not block; its half-written file is not used") {
    TestFiles.withTempDir("cache-killed") { dir =>
      val (s, crc) = shard(dir, 4 << 20)
      val cache = dir.resolve("cache")
      val holder = child(Seq("hold") ++ args(cache, s): _*).start()
      try {
        val out = new BufferedReader(new InputStreamReader(holder.getInputStream))
        assert(out.readLine() == "locked")
        assert(Files.size(cache.resolve(ShardCache.key(s) + ".tmp")) == s.bytes() / 2)
      } finally {
        holder.destroyForcibly()
        holder.waitFor(30, TimeUnit.SECONDS)
      }
      val conf = new Configuration()
      val t = new CacheTally()
      val in = new ShardCache(cache).open(s, conf, 1L << 40, t, () => {
        val p = new HPath(s.uri())
        p.getFileSystem(conf).open(p)
      })
      val got = new CRC32()
      try got.update(in.readAllBytes()) finally in.close()
      assert(got.getValue == crc)
      assert(t.counts().misses == 1 && t.counts().hits == 0 && t.counts().corrupt == 0)
      assert(Files.size(cache.resolve(ShardCache.key(s) + ".data")) == s.bytes())
    }
  }
}
