package dev.spindle.spark.testkit

import java.io.{ByteArrayOutputStream, FileOutputStream}
import java.nio.file.{Files, Path}

import dev.spindle.spark.shard.TarWriter
import org.apache.hadoop.fs.FileUtil

/** Temporary folders and small datasets for tests. */
object TestFiles {
  def tempDir(prefix: String): Path = Files.createTempDirectory("spindle-" + prefix)

  def deleteRecursively(p: Path): Unit =
    if (Files.exists(p)) assert(FileUtil.fullyDelete(p.toFile), s"could not delete $p")

  def withTempDir[T](prefix: String)(body: Path => T): T = {
    val dir = tempDir(prefix)
    try body(dir)
    finally deleteRecursively(dir)
  }

  /** Writes a tar of (name, bytes) entries with Spindle's writer. */
  def writeTar(file: Path, entries: Seq[(String, Array[Byte])]): Path = {
    val tar = new TarWriter(new FileOutputStream(file.toFile))
    try entries.foreach { case (n, b) => tar.add(n, b) }
    finally tar.close()
    file
  }

  def tarBytes(entries: Seq[(String, Array[Byte])]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val tar = new TarWriter(out)
    try entries.foreach { case (n, b) => tar.add(n, b) }
    finally tar.close()
    out.toByteArray
  }

  def ascii(s: String): Array[Byte] = s.getBytes("US-ASCII")
}
