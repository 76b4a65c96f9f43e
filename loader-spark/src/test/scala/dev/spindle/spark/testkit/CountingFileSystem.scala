package dev.spindle.spark.testkit

import java.net.URI
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FileStatus, LocatedFileStatus, Path, RawLocalFileSystem, RemoteIterator}

/**
 * The local file system under the scheme `counting:` (`counting:///tmp/x` is `/tmp/x`), recording
 * each call a caller makes to look at files (status, existence, listings, opens) with its path, as
 * an object store would bill them. Calls the local implementation makes to itself (its
 * `listStatus` asks each child's status) are not the caller's and are not recorded.
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
  override def listStatus(p: Path): Array[FileStatus] = counted("listStatus", p)(super.listStatus(p))
  override def listStatusIterator(p: Path): RemoteIterator[FileStatus] =
    counted("listStatusIterator", p)(super.listStatusIterator(p))
  override def listFiles(p: Path, recursive: Boolean): RemoteIterator[LocatedFileStatus] =
    counted("listFiles", p)(super.listFiles(p, recursive))
  override def listLocatedStatus(p: Path): RemoteIterator[LocatedFileStatus] =
    counted("listLocatedStatus", p)(super.listLocatedStatus(p))
  override def open(p: Path, bufferSize: Int): FSDataInputStream = counted("open", p)(super.open(p, bufferSize))
}

object CountingFileSystem {
  private val calls = new ConcurrentLinkedQueue[(String, String)]()
  private val depth = ThreadLocal.withInitial[Int](() => 0)

  /** Registers the scheme in `conf`. */
  def register(conf: Configuration): Configuration = {
    conf.set("fs.counting.impl", classOf[CountingFileSystem].getName)
    conf.setBoolean("fs.counting.impl.disable.cache", true)
    conf
  }

  def uri(p: java.nio.file.Path): String = "counting://" + p.toAbsolutePath.toString

  /** The calls (operation, path) made while `body` ran, in order. */
  def during[T](body: => T): (T, Seq[(String, String)]) = {
    calls.clear()
    val result = body
    (result, calls.asScala.toSeq)
  }
}
