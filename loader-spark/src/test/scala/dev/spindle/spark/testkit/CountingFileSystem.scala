package dev.spindle.spark.testkit

import java.net.URI
import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue}
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FSInputStream, FileStatus, LocatedFileStatus, Path, RawLocalFileSystem, RemoteIterator}

/**
 * The local file system under the scheme `counting:` (`counting:///tmp/x` is `/tmp/x`), recording
 * what callers ask of it, as an object store would bill them: each call that looks at files
 * (status, existence, listings, opens) with its path, and the bytes read from each file (by name,
 * every read path: sequential, positioned, vectored, all through one stream) and the read requests
 * an object store would bill (an open's first read, each positioned read, the first read after a
 * seek or skip to another position; a skip is a seek, as the local file system's). Calls the local
 * implementation makes to itself (its `listStatus` asks each child's status) are not the caller's
 * and are not recorded. Driver and local-mode executors share the JVM, hence the global records.
 */
class CountingFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("counting:///")
  override def getScheme: String = "counting"

  private def counted[T](op: String, p: Path)(body: => T): T = {
    val depth = CountingFileSystem.depth.get
    if (depth == 0) CountingFileSystem.calls.add((op, p.toUri.getPath))
    CountingFileSystem.depth.set(depth + 1)
    try body finally CountingFileSystem.depth.set(depth)
  }

  override def getFileStatus(p: Path): FileStatus = counted("getFileStatus", p)(super.getFileStatus(p))
  override def exists(p: Path): Boolean = counted("exists", p)(super.exists(p))

  /**
   * Plain statuses: the local ones find their permissions through a `file:` URI, which a listing
   * (`listFiles`) asks for and this scheme's paths are not.
   */
  override def listStatus(p: Path): Array[FileStatus] = counted("listStatus", p) {
    super.listStatus(p).map(s => new FileStatus(s.getLen, s.isDirectory, s.getReplication,
      s.getBlockSize, s.getModificationTime, s.getPath))
  }
  override def listStatusIterator(p: Path): RemoteIterator[FileStatus] =
    counted("listStatusIterator", p)(super.listStatusIterator(p))
  override def listFiles(p: Path, recursive: Boolean): RemoteIterator[LocatedFileStatus] =
    counted("listFiles", p)(super.listFiles(p, recursive))
  override def listLocatedStatus(p: Path): RemoteIterator[LocatedFileStatus] =
    counted("listLocatedStatus", p)(super.listLocatedStatus(p))

  override def open(p: Path, bufferSize: Int): FSDataInputStream = counted("open", p) {
    val bytes = CountingFileSystem.read.computeIfAbsent(p.getName, _ => new AtomicLong())
    val requests = CountingFileSystem.requested.computeIfAbsent(p.getName, _ => new AtomicLong())
    new FSDataInputStream(new CountingFileSystem.Counted(super.open(p, bufferSize), bytes, requests))
  }
}

object CountingFileSystem {
  private val calls = new ConcurrentLinkedQueue[(String, String)]()
  private val depth = ThreadLocal.withInitial[Int](() => 0)
  private val read = new ConcurrentHashMap[String, AtomicLong]()
  private val requested = new ConcurrentHashMap[String, AtomicLong]()

  /** Registers the scheme in `conf` (instances uncached). */
  def register(conf: Configuration): Configuration = {
    conf.set("fs.counting.impl", classOf[CountingFileSystem].getName)
    conf.setBoolean("fs.counting.impl.disable.cache", true)
    conf
  }

  def uri(p: java.nio.file.Path): String = "counting://" + p.toAbsolutePath.toString

  /** Forgets what was counted. */
  def reset(): Unit = {
    calls.clear()
    read.clear()
    requested.clear()
  }

  /** The calls (operation, path) made while `body` ran, in order. */
  def during[T](body: => T): (T, Seq[(String, String)]) = {
    calls.clear()
    val result = body
    (result, calls.asScala.toSeq)
  }

  /** Bytes read from files whose name ends with `suffix`, since the last reset. */
  def bytesRead(suffix: String): Long =
    read.asScala.collect { case (name, n) if name.endsWith(suffix) => n.get }.sum

  /** Read requests to files whose name ends with `suffix`, since the last reset. */
  def readRequests(suffix: String): Long =
    requested.asScala.collect { case (name, n) if name.endsWith(suffix) => n.get }.sum

  /** Folder listings (any listing call) since the last reset. */
  def listingCount: Long = calls.asScala.count(_._1.startsWith("list")).toLong

  /**
   * A stream that adds every byte it returns to `bytes`, and to `requests` each read that an
   * object store would answer with a new request: the first, the first after a seek to another
   * position, and each positioned read.
   */
  private final class Counted(in: FSDataInputStream, bytes: AtomicLong, requests: AtomicLong)
      extends FSInputStream {
    private var fresh = true

    override def seek(pos: Long): Unit = {
      if (pos != in.getPos) fresh = true
      in.seek(pos)
    }
    override def getPos: Long = in.getPos
    override def seekToNewSource(targetPos: Long): Boolean = false
    override def available(): Int = in.available()
    override def close(): Unit = in.close()

    /** A seek, as the local file system's own stream skips. */
    override def skip(n: Long): Long = {
      if (n <= 0) 0L else { seek(in.getPos + n); n }
    }

    private def took(n: Int): Unit = {
      if (fresh) { requests.incrementAndGet(); fresh = false }
      if (n > 0) bytes.addAndGet(n)
    }

    override def read(): Int = {
      val b = in.read()
      took(if (b >= 0) 1 else 0)
      b
    }

    override def read(b: Array[Byte], off: Int, len: Int): Int = {
      val n = in.read(b, off, len)
      took(n)
      n
    }

    override def read(position: Long, b: Array[Byte], off: Int, len: Int): Int = {
      requests.incrementAndGet()
      val n = in.read(position, b, off, len)
      if (n > 0) bytes.addAndGet(n)
      n
    }

    override def readFully(position: Long, b: Array[Byte], off: Int, len: Int): Unit = {
      requests.incrementAndGet()
      in.readFully(position, b, off, len)
      bytes.addAndGet(len)
    }
  }
}
