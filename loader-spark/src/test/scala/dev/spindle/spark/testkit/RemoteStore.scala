package dev.spindle.spark.testkit

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FileSystem, Path => HPath}

/**
 * A storage server a test starts (HDFS, S3) as the suites that read and write through it see it:
 * URIs under its root, the Spark settings a session needs to reach it, and copies to and from local
 * disk. Owned by the suite that starts it; [[close]] stops the server.
 */
trait RemoteStore extends AutoCloseable {
  /** `hdfs://127.0.0.1:<port>/path` or `s3a://bucket/path`. */
  def uri(path: String): String

  /** What a SparkSession needs to reach it (`spark.hadoop.*`). */
  def sparkSettings: Map[String, String]

  /** A new client (the caller closes it). */
  def fileSystem(): FileSystem

  /** Copies a local file or folder tree to `path`; returns its URI. */
  def upload(local: Path, path: String): String = {
    val fs = fileSystem()
    try fs.copyFromLocalFile(false, true, new HPath(local.toUri), new HPath(uri(path)))
    finally fs.close()
    uri(path)
  }

  /** Copies the folder `remote` (a URI of this store) into the new local folder `local`. */
  def download(remote: String, local: Path): Path = {
    val fs = fileSystem()
    try {
      Files.createDirectories(local.getParent)
      fs.copyToLocalFile(false, new HPath(remote), new HPath(local.toUri), true)
    } finally fs.close()
    local
  }

  /** The names in the folder `remote`, none if it does not exist. */
  def names(remote: String): Set[String] = {
    val fs = fileSystem()
    try {
      val p = new HPath(remote)
      if (!fs.exists(p)) Set.empty else fs.listStatus(p).map(_.getPath.getName).toSet
    } finally fs.close()
  }

  /** The content of the file `remote`, as UTF-8. */
  def read(remote: String): String = {
    val fs = fileSystem()
    try {
      val in = fs.open(new HPath(remote))
      try new String(in.readAllBytes(), "UTF-8") finally in.close()
    } finally fs.close()
  }

  /** Files (not folders) under `remote`, recursively, relative to it. */
  def files(remote: String): Set[String] = {
    val fs = fileSystem()
    try {
      val root = new HPath(remote)
      val prefix = fs.makeQualified(root).toString.stripSuffix("/") + "/"
      val it = fs.listFiles(root, true)
      Iterator.continually(it).takeWhile(_.hasNext).map(_.next().getPath.toString.stripPrefix(prefix)).toSet
    } finally fs.close()
  }
}
