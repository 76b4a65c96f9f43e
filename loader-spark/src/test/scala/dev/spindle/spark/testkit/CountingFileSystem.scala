package dev.spindle.spark.testkit

import java.net.URI
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FSDataInputStream, FSInputStream, Path, RawLocalFileSystem}

/**
 * The local file system under the scheme `counting:` (`counting:///tmp/x` is `/tmp/x`), counting
 * what readers ask of it: the bytes read from each file (by name, every read path: sequential,
 * positioned, vectored, all through one stream) and the folder listings. Driver and local-mode
 * executors share the JVM, hence the global counters.
 */
class CountingFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("counting:///")
  override def getScheme: String = "counting"

  override def open(f: Path, bufferSize: Int): FSDataInputStream = {
    val bytes = CountingFileSystem.read.computeIfAbsent(f.getName, _ => new AtomicLong())
    new FSDataInputStream(new CountingFileSystem.Counted(super.open(f, bufferSize), bytes))
  }

  /**
   * Plain statuses: the local ones find their permissions through a `file:` URI, which a listing
   * (`listFiles`) asks for and this scheme's paths are not.
   */
  override def listStatus(f: Path): Array[FileStatus] = {
    CountingFileSystem.listings.incrementAndGet()
    super.listStatus(f).map(s => new FileStatus(s.getLen, s.isDirectory, s.getReplication,
      s.getBlockSize, s.getModificationTime, s.getPath))
  }
}

object CountingFileSystem {
  private val read = new ConcurrentHashMap[String, AtomicLong]()
  private val listings = new AtomicLong()

  /** Registers the scheme in `conf`. */
  def register(conf: Configuration): Unit =
    conf.set("fs.counting.impl", classOf[CountingFileSystem].getName)

  def uri(p: java.nio.file.Path): String = "counting://" + p.toAbsolutePath.toString

  /** Forgets what was counted. */
  def reset(): Unit = {
    read.clear()
    listings.set(0)
  }

  /** Bytes read from files whose name ends with `suffix`, since the last reset. */
  def bytesRead(suffix: String): Long =
    read.asScala.collect { case (name, n) if name.endsWith(suffix) => n.get }.sum

  /** Folder listings since the last reset. */
  def listingCount: Long = listings.get

  /** A stream that adds every byte it returns to `bytes`. */
  private final class Counted(in: FSDataInputStream, bytes: AtomicLong) extends FSInputStream {
    override def seek(pos: Long): Unit = in.seek(pos)
    override def getPos: Long = in.getPos
    override def seekToNewSource(targetPos: Long): Boolean = false
    override def available(): Int = in.available()
    override def close(): Unit = in.close()

    override def read(): Int = {
      val b = in.read()
      if (b >= 0) bytes.incrementAndGet()
      b
    }

    override def read(b: Array[Byte], off: Int, len: Int): Int = {
      val n = in.read(b, off, len)
      if (n > 0) bytes.addAndGet(n)
      n
    }
  }
}
