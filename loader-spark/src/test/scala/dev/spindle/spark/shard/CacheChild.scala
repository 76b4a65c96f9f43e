package dev.spindle.spark.shard

import java.nio.file.{Files, Path, Paths}
import java.util.zip.CRC32

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HPath}

/**
 * An executor stand-in for [[ShardCacheProcessSuite]], run in its own JVM on a cache folder that
 * other processes share. `open DIR SHARD SIZE MTIME READY GO`: says it is ready, waits for GO,
 * reads the shard through the cache, prints `misses hits corrupt crc32`. `hold DIR SHARD SIZE MTIME`:
 * takes the shard's entry lock, writes half a temporary file, prints `locked` and waits to be killed.
 */
object CacheChild {
  def main(args: Array[String]): Unit = {
    val dir = Paths.get(args(1))
    val shard = new Shard(args(2), ShardFormat.TAR, args(3).toLong, args(4).toLong, 1,
      java.util.List.of())
    args(0) match {
      case "open" => open(dir, shard, Paths.get(args(5)), Paths.get(args(6)))
      case "hold" => hold(dir, shard)
    }
  }

  private def open(dir: Path, shard: Shard, ready: Path, go: Path): Unit = {
    val conf = new Configuration()
    Files.createFile(ready)
    while (!Files.exists(go)) Thread.sleep(1)
    val t = new CacheTally()
    val in = new ShardCache(dir).open(shard, conf, 1L << 40, t, () => {
      val p = new HPath(shard.uri())
      p.getFileSystem(conf).open(p)
    })
    val crc = new CRC32()
    try crc.update(in.readAllBytes()) finally in.close()
    val c = t.counts()
    println(s"${c.misses} ${c.hits} ${c.corrupt} ${crc.getValue}")
  }

  private def hold(dir: Path, shard: Shard): Unit = {
    val d = new CacheDir(dir, f => Files.newOutputStream(f))
    val key = ShardCache.key(shard)
    d.lockEntry(key) // held until this process dies
    Files.write(d.temporary(key), new Array[Byte]((shard.bytes / 2).toInt))
    println("locked")
    System.out.flush()
    Thread.sleep(600000)
  }
}
