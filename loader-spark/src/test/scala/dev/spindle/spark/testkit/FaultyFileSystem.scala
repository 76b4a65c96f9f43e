package dev.spindle.spark.testkit

import java.io.{FilterOutputStream, IOException, OutputStream}
import java.net.URI
import java.util.concurrent.atomic.AtomicLong

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataOutputStream, Path, RawLocalFileSystem}
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.security.AccessControlException
import org.apache.hadoop.util.Progressable

/**
 * The local file system under the scheme `faulty:` (`faulty:///tmp/x` is `/tmp/x`), failing the
 * way real storage fails: once [[FaultyFileSystem.diskFull]] bytes have been written to output
 * files (`.arrow`, `.parquet`), further writes fail with ENOSPC's bare message "No space left on
 * device"; under [[FaultyFileSystem.failFirstFiles]] the first writes into the first N output
 * files created fail (a task attempt that dies mid-file, to be retried); in
 * [[FaultyFileSystem.readOnly]] mode every create, mkdirs, rename and delete is refused with
 * "Permission denied". Driver and local-mode executors share the JVM, hence the global switch.
 *
 * Where each JVM is a process of its own (a real cluster: `spark.hadoop.fs.faulty.impl` and a jar
 * holding this class), the same faults come from the Hadoop configuration instead:
 * `fs.faulty.capacityBytes` (this JVM can write that many more bytes of output files),
 * `fs.faulty.readOnlyAtCommit` (a rename out of a `_temporary` folder, a job's commit, finds the
 * file system read-only from then on) and `fs.faulty.createDelayMs` (a slow disk: creating an
 * output file takes that long, after the file appears, so a test can act while tasks write).
 */
class FaultyFileSystem extends RawLocalFileSystem {
  private var createDelayMs = 0L
  private var readOnlyAtCommit = false

  override def getUri: URI = URI.create("faulty:///")
  override def getScheme: String = "faulty"

  override def initialize(uri: URI, conf: Configuration): Unit = {
    super.initialize(uri, conf)
    createDelayMs = conf.getLong("fs.faulty.createDelayMs", 0L)
    readOnlyAtCommit = conf.getBoolean("fs.faulty.readOnlyAtCommit", false)
    val capacity = conf.getLong("fs.faulty.capacityBytes", -1L)
    if (capacity >= 0) FaultyFileSystem.left.set(capacity)
  }

  override def create(f: Path, permission: FsPermission, overwrite: Boolean, bufferSize: Int,
      replication: Short, blockSize: Long, progress: Progressable): FSDataOutputStream = {
    refuseIfReadOnly("create", f)
    wrap(f, super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress))
  }

  override def create(f: Path, overwrite: Boolean, bufferSize: Int, replication: Short,
      blockSize: Long, progress: Progressable): FSDataOutputStream = {
    refuseIfReadOnly("create", f)
    wrap(f, super.create(f, overwrite, bufferSize, replication, blockSize, progress))
  }

  override def mkdirs(f: Path, permission: FsPermission): Boolean = {
    refuseIfReadOnly("mkdirs", f)
    super.mkdirs(f, permission)
  }

  override def mkdirs(f: Path): Boolean = {
    refuseIfReadOnly("mkdirs", f)
    super.mkdirs(f)
  }

  override def rename(src: Path, dst: Path): Boolean = {
    if (readOnlyAtCommit && src.getParent.getParent.getName == "_temporary") {
      FaultyFileSystem.readOnlyNow = true
    }
    refuseIfReadOnly("rename", src)
    super.rename(src, dst)
  }

  override def delete(p: Path, recursive: Boolean): Boolean = {
    refuseIfReadOnly("delete", p)
    super.delete(p, recursive)
  }

  private def refuseIfReadOnly(op: String, f: Path): Unit =
    if (FaultyFileSystem.readOnlyNow) throw new AccessControlException(s"Permission denied: $op $f")

  private def wrap(f: Path, out: FSDataOutputStream): FSDataOutputStream =
    if (!f.getName.endsWith(".arrow") && !f.getName.endsWith(".parquet")) out
    else {
      if (createDelayMs > 0) Thread.sleep(createDelayMs)
      val doomed = FaultyFileSystem.failing.getAndDecrement() > 0
      new FSDataOutputStream(new FilterOutputStream(out) {
        override def write(b: Int): Unit = { take(1, doomed); out.write(b) }
        override def write(b: Array[Byte], off: Int, len: Int): Unit = { take(len, doomed); out.write(b, off, len) }
      }, null)
    }

  private def take(n: Long, doomed: Boolean): Unit = {
    if (doomed) throw new IOException("Injected fault: this attempt's file cannot be written")
    if (FaultyFileSystem.left.addAndGet(-n) < 0) throw new IOException("No space left on device")
  }
}

object FaultyFileSystem {
  private val left = new AtomicLong(Long.MaxValue)
  private val failing = new AtomicLong(0)
  @volatile private var readOnlyNow = false

  /** Registers the scheme in `conf` (instances uncached, so each job sees the current mode). */
  def register(conf: Configuration): Unit = {
    conf.set("fs.faulty.impl", classOf[FaultyFileSystem].getName)
    conf.setBoolean("fs.faulty.impl.disable.cache", true)
  }

  def uri(p: java.nio.file.Path): String = "faulty://" + p.toAbsolutePath.toString

  /** Runs `body` with only `capacity` more bytes of `.arrow` files writable. */
  def diskFull[T](capacity: Long)(body: => T): T = {
    left.set(capacity)
    try body finally left.set(Long.MaxValue)
  }

  /** Runs `body` with writes into the first `files` output files it creates failing. */
  def failFirstFiles[T](files: Int)(body: => T): T = {
    failing.set(files)
    try body finally failing.set(0)
  }

  /** From now on every change is refused (or, with `false`, allowed again): for a test's hook. */
  def setReadOnly(on: Boolean): Unit = readOnlyNow = on

  /** Runs `body` with every change refused. */
  def readOnly[T](body: => T): T = {
    readOnlyNow = true
    try body finally readOnlyNow = false
  }
}
