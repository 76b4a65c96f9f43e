package dev.spindle.spark.sink

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}
import java.nio.file.attribute.FileTime
import java.time.Duration

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.testkit.TestFiles
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path => HPath}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The output lock as a lease: a lock is stale only when its lease ran out, or when its driver is
 * gone and certainly shared this JVM's PID namespace; a host name alone (containers with host
 * networking) never makes another job's pid count here. A job whose lock was taken over refuses
 * to commit and leaves the new holder's files alone.
 */
class OutputLockSuite extends AnyFunSuite {
  private val fs = FileSystem.getLocal(new Configuration())
  private val json = new ObjectMapper()
  private val lease = Duration.ofSeconds(120)

  private def deadPid(): Long = {
    val p = new ProcessBuilder("true").start()
    p.waitFor()
    p.pid()
  }

  /**
   * A lock as another job writes it: on this host unless told, renewed `silentS` seconds ago
   * (heartbeat and file time), in the given PID namespace and boot (omitted when null).
   */
  private def writeLock(out: Path, job: String, pid: Long, startMs: Long, silentS: Long,
      pidNamespace: String, bootId: String = OutputLock.bootId(), leaseMs: Long = 120000,
      host: String = OutputLock.hostName()): Path = {
    val now = System.currentTimeMillis()
    val m = new java.util.LinkedHashMap[String, Any]()
    m.put("job", job); m.put("description", s"preprocess in -> $out"); m.put("user", "someone")
    m.put("host", host); m.put("pid", pid); m.put("process_start_ms", startMs)
    m.put("started", "2026-01-01T00:00:00Z")
    if (bootId != null) m.put("boot_id", bootId)
    if (pidNamespace != null) m.put("pid_namespace", pidNamespace)
    m.put("heartbeat_ms", now - silentS * 1000); m.put("lease_ms", leaseMs)
    val file = Files.createDirectories(out).resolve(OutputLock.FILE)
    Files.write(file, json.writeValueAsBytes(m))
    Files.setLastModifiedTime(file, FileTime.fromMillis(now - silentS * 1000))
    file
  }

  private def acquire(out: Path, job: String, lease: Duration = lease): OutputLock =
    OutputLock.acquire(fs, new HPath(out.toUri), job, "test job", lease)

  private def lockJob(out: Path): String =
    json.readTree(out.resolve(OutputLock.FILE).toFile).get("job").asText()

  private val otherNamespace = "pid:[4026530001]"

  test("a fresh lease from another PID namespace on this host is honoured, whatever its pid is here") {
    assume(OutputLock.pidNamespace() != null && OutputLock.pidNamespace() != otherNamespace)
    TestFiles.withTempDir("lock-ns") { dir =>
      val sleeper = new ProcessBuilder("sleep", "60").start() // a live process unrelated to the lock
      try {
        for ((what, pid) <- Seq("a pid not running here" -> deadPid(), "an unrelated live pid" -> sleeper.pid())) {
          val out = dir.resolve(what.replace(' ', '-'))
          writeLock(out, "job-next-door", pid, startMs = 1, silentS = 0, pidNamespace = otherNamespace)
          val e = intercept[OutputLock.LockedException](acquire(out, "me"))
          assert(e.getMessage.contains(s"is in use by job job-next-door (preprocess in -> $out)"), what)
          assert(e.getMessage.contains(s"pid $pid"), what)
          assert(lockJob(out) == "job-next-door", s"$what: the live job's lock was replaced")
        }
      } finally sleeper.destroyForcibly()
    }
  }

  test("the same lock not renewed for longer than its lease is stale and taken over, naming why") {
    TestFiles.withTempDir("lock-old") { dir =>
      val out = dir.resolve("out")
      writeLock(out, "paused-job", deadPid(), startMs = 1, silentS = 600, pidNamespace = otherNamespace)
      val lock = acquire(out, "me")
      try {
        assert(lock.replacedStale().get().job() == "paused-job")
        assert(lock.staleReason().matches(
          "not refreshed for 60\\d s \\(lease 120 s; spark.spindle.output.staleLockSeconds=120\\)"),
          lock.staleReason())
        assert(lockJob(out) == "me")
        val mine = json.readTree(out.resolve(OutputLock.FILE).toFile)
        assert(mine.get("lease_ms").asLong() == 120000L)
        assert(Math.abs(mine.get("heartbeat_ms").asLong() - System.currentTimeMillis()) < 60000)
        assert(mine.get("pid_namespace").asText() == OutputLock.pidNamespace())
      } finally lock.close()
      assert(!Files.exists(out.resolve(OutputLock.FILE)))
    }
  }

  test("in this JVM's PID namespace a gone driver's lock is taken over at once; without its namespace it waits") {
    assume(OutputLock.pidNamespace() != null && OutputLock.bootId() != null)
    TestFiles.withTempDir("lock-same") { dir =>
      val pid = deadPid()
      val same = dir.resolve("same")
      writeLock(same, "crashed-job", pid, startMs = 1, silentS = 0, pidNamespace = OutputLock.pidNamespace())
      val lock = acquire(same, "me")
      try assert(lock.staleReason() == s"its driver, pid $pid on ${OutputLock.hostName()}, is not running")
      finally lock.close()
      // a lock that names no namespace (an earlier Spindle's, or a machine without /proc) or
      // another boot of a machine of the same name: its pid proves nothing, the lease decides
      for ((what, ns, boot) <- Seq(("no namespace", null, null),
          ("another boot", OutputLock.pidNamespace(), "9b1c7a52-0000-4000-8000-000000000000"))) {
        val out = dir.resolve(what.replace(' ', '-'))
        writeLock(out, "maybe-alive", pid, startMs = 1, silentS = 0, pidNamespace = ns, bootId = boot)
        intercept[OutputLock.LockedException](acquire(out, "me"))
        assert(lockJob(out) == "maybe-alive", what)
      }
    }
  }

  test("a holder's own lease, longer than this job's, is honoured") {
    TestFiles.withTempDir("lock-long") { dir =>
      val out = dir.resolve("out")
      writeLock(out, "patient-job", 1, startMs = 1, silentS = 300, pidNamespace = "pid:[1]",
        leaseMs = 600000, host = "host-elsewhere.example")
      val e = intercept[OutputLock.LockedException](acquire(out, "me"))
      assert(e.getMessage.contains("patient-job") && e.getMessage.contains("host-elsewhere.example"))
      Files.setLastModifiedTime(out.resolve(OutputLock.FILE), FileTime.fromMillis(System.currentTimeMillis() - 700000))
      val edited = json.readTree(out.resolve(OutputLock.FILE).toFile).asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
      edited.put("heartbeat_ms", System.currentTimeMillis() - 700000)
      Files.write(out.resolve(OutputLock.FILE), json.writeValueAsBytes(edited))
      Files.setLastModifiedTime(out.resolve(OutputLock.FILE), FileTime.fromMillis(System.currentTimeMillis() - 700000))
      val lock = acquire(out, "me")
      try assert(lock.staleReason().startsWith("not refreshed for 70") &&
        lock.staleReason().contains("(lease 600 s;"), lock.staleReason())
      finally lock.close()
    }
  }

  test("a job whose lock was taken over refuses to commit, names the new holder and leaves its files") {
    TestFiles.withTempDir("lock-taken") { dir =>
      val out = dir.resolve("out")
      def committer() = new OutputCommitter(out.toUri.toString, new Configuration(), "test job",
        new OutputCommitter.Settings(true, Duration.ofSeconds(1), OutputFormat.ARROW))
      def attempt(c: OutputCommitter, p: Int, text: String): CommittedFile = {
        val file = OutputCommitter.attemptFile(c.jobTemporaryUri(), p, 7L, OutputFormat.ARROW)
        Files.write(Path.of(file.toUri.getPath), text.getBytes(UTF_8))
        new CommittedFile(p, file.toString, 1, text.length)
      }
      def manifest(c: OutputCommitter, n: Int): String = json.writeValueAsString(Map(
        "job" -> c.jobId(), "files" -> (0 until n).map(p => Map("path" -> c.finalName(p)).asJava).asJava).asJava)

      val paused = committer()
      paused.setup()
      val pausedFiles = java.util.List.of(attempt(paused, 0, "a0"), attempt(paused, 1, "a1"))
      var taker: OutputCommitter = null
      paused.onStep { step =>
        if (step.startsWith("rename") && step.contains("part-00001")) {
          // the driver pauses here past its lease; as seen from another PID namespace, its pid
          // says nothing, so its lock is stale once not renewed for a lease
          paused.lock().abandon()
          Thread.sleep(500) // a third of its lease and more: the next step checks the lock again
          val lockFile = out.resolve(OutputLock.FILE)
          val tree = json.readTree(lockFile.toFile).asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
          tree.put("pid_namespace", otherNamespace).put("heartbeat_ms", 1L)
          Files.write(lockFile, json.writeValueAsBytes(tree))
          Files.setLastModifiedTime(lockFile, FileTime.fromMillis(System.currentTimeMillis() - 5000))
          taker = committer()
          val recovery = taker.setup()
          assert(recovery.staleLock().job() == paused.jobId())
          assert(recovery.removed().asScala.toSet ==
            Set("_temporary/" + paused.jobId(), paused.finalName(0)), "the paused job's leftovers")
          taker.commit(java.util.List.of(attempt(taker, 0, "b0")), manifest(taker, 1))
        }
      }
      val e = intercept[OutputLock.LockedException](paused.commit(pausedFiles, manifest(paused, 2)))
      try {
        assert(e.getMessage.contains(s"Job ${paused.jobId()} lost its lock on "), e.getMessage)
        assert(e.getMessage.contains(s"to job ${taker.jobId()} (test job)"), e.getMessage)
        assert(e.getMessage.contains("commits nothing"), e.getMessage)
        paused.abortAfter(e)
        paused.close()
        val listed = json.readTree(out.resolve(OutputCommitter.MANIFEST).toFile)
        assert(listed.get("job").asText() == taker.jobId(), "the manifest is the new holder's")
        assert(Files.readString(out.resolve(taker.finalName(0))) == "b0")
        assert(lockJob(out) == taker.jobId(), "the paused job released a lock that was not its own")
        val names = Files.list(out).iterator().asScala.map(_.getFileName.toString).filterNot(_.startsWith(".")).toSet
        assert(names == Set(OutputCommitter.MANIFEST, OutputLock.FILE, taker.finalName(0)),
          "nothing of the paused job is left, nothing of the new holder's is gone")
      } finally taker.close()
    }
  }
}
