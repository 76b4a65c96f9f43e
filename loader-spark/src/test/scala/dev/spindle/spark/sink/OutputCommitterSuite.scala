package dev.spindle.spark.sink

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}
import java.time.Duration

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.testkit.{FaultyFileSystem, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/**
 * The commit protocol under a driver that dies at each step of a commit: at every instant the
 * manifest lists a complete output, the old one before the switch and the new one after it, and
 * the next job removes what the dead one left.
 */
class OutputCommitterSuite extends AnyFunSuite {
  private val json = new ObjectMapper()
  private final class Crash extends Error("driver killed here")

  private def committer(out: Path, overwrite: Boolean): OutputCommitter =
    new OutputCommitter(out.toUri.toString, new Configuration(), "test job",
      new OutputCommitter.Settings(overwrite, Duration.ofSeconds(120), OutputFormat.ARROW))

  /** Writes attempt files for `contents` (one per partition) and returns their records. */
  private def attempts(c: OutputCommitter, contents: Seq[String]): java.util.List[CommittedFile] =
    contents.zipWithIndex.map { case (text, p) =>
      val file = OutputCommitter.attemptFile(c.jobTemporaryUri(), p, 100L + p, OutputFormat.ARROW)
      val local = Path.of(file.toUri.getPath)
      Files.write(local, text.getBytes(UTF_8))
      new CommittedFile(p, file.toString, 1, text.length)
    }.asJava

  private def manifestJson(c: OutputCommitter, contents: Seq[String]): String = {
    val files = contents.zipWithIndex.map { case (text, p) =>
      Map("path" -> c.finalName(p), "bytes" -> text.length).asJava }
    json.writeValueAsString(Map("files" -> files.asJava, "job" -> c.jobId()).asJava)
  }

  private def commitAll(out: Path, contents: Seq[String], overwrite: Boolean): OutputCommitter.Recovery = {
    val c = committer(out, overwrite)
    try {
      val recovery = c.setup()
      c.commit(attempts(c, contents), manifestJson(c, contents))
      recovery
    } finally c.close()
  }

  /** What a reader trusting the manifest sees; fails if a listed file is missing or wrong. */
  private def read(out: Path): Seq[String] = {
    val m = json.readValue(out.resolve(OutputCommitter.MANIFEST).toFile, classOf[java.util.Map[String, AnyRef]])
    m.get("files").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]].asScala.toSeq.map { f =>
      val file = out.resolve(f.get("path").toString)
      assert(Files.exists(file), s"manifest lists missing $file")
      val text = Files.readString(file)
      assert(text.length == f.get("bytes").asInstanceOf[Number].intValue, s"$file is incomplete")
      text
    }
  }

  private def visible(out: Path): Set[String] =
    Files.list(out).iterator().asScala.map(_.getFileName.toString).filterNot(_.startsWith(".")).toSet

  /** The lock as a killed driver leaves it: not refreshed, naming a process that is gone. */
  private def killDriver(c: OutputCommitter, out: Path): Unit = {
    c.lock().abandon()
    val dead = { val p = new ProcessBuilder("true").start(); p.waitFor(); p.pid() }
    val lockFile = out.resolve(OutputLock.FILE)
    Files.writeString(lockFile, Files.readString(lockFile).replaceAll("\"pid\":\\d+", "\"pid\":" + dead))
  }

  private val oldOutput = Seq("old-0", "old-1")
  private val newOutput = Seq("new-0!", "new-1!", "new-2!")
  // steps: rename each of the 3 new parts, switch the manifest, delete the old files
  private val steps = 5

  for (crashAt <- 0 until steps) {
    test(s"a driver killed at commit step $crashAt leaves a complete output, cleaned by the next job") {
      TestFiles.withTempDir("crash") { dir =>
        val out = dir.resolve("out")
        commitAll(out, oldOutput, overwrite = false)
        val dying = committer(out, overwrite = true)
        dying.setup()
        var step = 0
        var crashedIn = ""
        dying.onStep { name =>
          if (step == crashAt) { crashedIn = name; throw new Crash }
          step += 1
        }
        intercept[Crash](dying.commit(attempts(dying, newOutput), manifestJson(dying, newOutput)))
        killDriver(dying, out)

        val seen = read(out)
        val expected = if (crashAt < 4) oldOutput else newOutput
        assert(seen == expected, s"killed before '$crashedIn'")

        val next = commitAll(out, Seq("next"), overwrite = true)
        assert(next.staleLock().job() == dying.jobId())
        assert(next.staleReason().contains("is not running"))
        assert(next.removed().asScala.contains("_temporary/" + dying.jobId()))
        assert(read(out) == Seq("next"))
        assert(visible(out) == Set(OutputCommitter.MANIFEST, Path.of(
          json.readValue(out.resolve(OutputCommitter.MANIFEST).toFile, classOf[java.util.Map[String, AnyRef]])
            .get("files").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]].get(0).get("path").toString)
          .toString))
      }
    }
  }

  test("a job that lost its lock to another does not commit") {
    TestFiles.withTempDir("lost") { dir =>
      val out = dir.resolve("out")
      val c = committer(out, overwrite = false)
      c.setup()
      try {
        val lockFile = out.resolve(OutputLock.FILE)
        Files.writeString(lockFile, Files.readString(lockFile).replace(c.jobId(), "usurper"))
        val e = intercept[OutputLock.LockedException](c.commit(attempts(c, Seq("x")), manifestJson(c, Seq("x"))))
        assert(e.getMessage.contains("lost its lock"))
        assert(!Files.exists(out.resolve(OutputCommitter.MANIFEST)))
      } finally {
        c.abort()
        c.close()
      }
      assert(Files.exists(out.resolve(OutputLock.FILE)), "released a lock that was not its own")
    }
  }

  test("a file system read-only from the commit on: the error names the attempt file and its target") {
    TestFiles.withTempDir("ro-commit") { dir =>
      val out = dir.resolve("out")
      val conf = new Configuration()
      FaultyFileSystem.register(conf)
      val c = new OutputCommitter(FaultyFileSystem.uri(out), conf, "test job",
        new OutputCommitter.Settings(false, Duration.ofSeconds(120), OutputFormat.ARROW))
      c.setup()
      try {
        val files = attempts(c, Seq("x"))
        // read-only from the first rename on (the lock's renewal before it still wrote)
        c.onStep(step => if (step.startsWith("rename")) FaultyFileSystem.setReadOnly(true))
        val e = try intercept[OutputWriteException](c.commit(files, manifestJson(c, Seq("x"))))
          finally FaultyFileSystem.setReadOnly(false)
        assert(e.getMessage == s"Cannot commit ${files.get(0).tempPath()} to faulty:$out/${c.finalName(0)}:" +
          s" Permission denied: rename ${files.get(0).tempPath()}", e.getMessage)
        assert(!Files.exists(out.resolve(OutputCommitter.MANIFEST)))
      } finally {
        c.abort()
        c.close()
      }
    }
  }
}
