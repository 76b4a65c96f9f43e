package dev.spindle.spark.preprocess
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.util.concurrent.{Callable, Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._
import scala.util.Try

import dev.spindle.spark.metrics.JobReport
import dev.spindle.spark.sink.{OutputCommitter, OutputLock, OutputWriteException}
import dev.spindle.spark.testkit.{ArrowFiles, FaultyFileSystem, FaultySparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.example.GenSample

/**
 * The output side of preprocess on embedded Spark: every failure path cleans up, the output is
 * locked against a second job, a dead job's lock and files are recognised and removed, and
 * write errors name the output.
 */
class PreprocessOutputSuite extends AnyFunSuite with FaultySparkFixture {
  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.batchSize" -> "4",
    "spark.spindle.partitionBytes" -> "1")

  private def gen(dir: Path, shards: Int = 2, perShard: Int = 4, seed: Long = 7L): Path = {
    GenSample.run(new GenSample.Options(dir.toString, shards, perShard, 48, 32, seed), new Configuration())
    dir
  }

  private def run(in: Path, out: String, overwrite: Boolean = false,
      extra: Map[String, String] = Map.empty): JobReport =
    PreprocessJob.run(spark, in.toString, out, overwrite, (conf ++ extra).asJava)

  /** Names in the output folder that are not hidden side files (Hadoop's .crc). */
  private def visible(out: Path): Set[String] =
    Files.list(out).iterator().asScala.map(_.getFileName.toString).filterNot(_.startsWith(".")).toSet

  private def listed(out: Path): Set[String] =
    ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet

  private def jobsStarted(body: => Unit): Int = {
    val n = new AtomicInteger()
    val listener = new SparkListener {
      override def onJobStart(e: SparkListenerJobStart): Unit = n.incrementAndGet()
    }
    spark.sparkContext.addSparkListener(listener)
    try {
      body
      Thread.sleep(1000) // job-start events of a job that ran were posted long before it ended
      n.get
    } finally spark.sparkContext.removeSparkListener(listener)
  }

  test("a disk that fills up mid-job fails it with the output's path, and nothing is left") {
    TestFiles.withTempDir("full") { dir =>
      val in = gen(dir.resolve("in"))
      val out = dir.resolve("out")
      val first = run(in, FaultyFileSystem.uri(out))
      val before = listed(out)
      val e = intercept[Exception] {
        FaultyFileSystem.diskFull(capacity = 2000) {
          run(gen(dir.resolve("in2"), seed = 8L), FaultyFileSystem.uri(out), overwrite = true)
        }
      }
      val message = dev.spindle.spark.cli.Errors.rootMessage(e)
      assert(message.contains("No space left on device"), message)
      assert(message.contains(out.toString + "/_temporary/"), message)
      assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
        .exists(_.isInstanceOf[OutputWriteException]), e)
      assert(!Files.exists(out.resolve("_temporary")), "temporary files left after a failed job")
      assert(!Files.exists(out.resolve(OutputLock.FILE)), "lock left after a failed job")
      assert(listed(out) == before && visible(out) == before + "_manifest.json")
      assert(ArrowFiles.readAll(out).size == first.get("images").asInstanceOf[Long])
    }
  }

  test("a read-only output is refused before any Spark job runs") {
    TestFiles.withTempDir("ro") { dir =>
      val in = gen(dir.resolve("in"))
      val out = Files.createDirectories(dir.resolve("out"))
      var error: Throwable = null
      val jobs = jobsStarted {
        error = intercept[OutputWriteException] {
          FaultyFileSystem.readOnly(run(in, FaultyFileSystem.uri(out)))
        }
      }
      assert(jobs == 0, "tasks ran before the output was found read-only")
      assert(error.getMessage.contains("Output faulty:" + out + " is not writable"), error.getMessage)
      assert(error.getMessage.contains("Permission denied"), error.getMessage)
      assert(Files.list(out).count() == 0)
    }
  }

  test("a second job on a locked output is refused at start, naming the running job") {
    TestFiles.withTempDir("lock") { dir =>
      val in = gen(dir.resolve("in"))
      val out = Files.createDirectories(dir.resolve("out"))
      val fs = org.apache.hadoop.fs.FileSystem.getLocal(new Configuration())
      val lock = OutputLock.acquire(fs, new org.apache.hadoop.fs.Path(out.toUri), "job-in-progress",
        "preprocess s3a://elsewhere -> " + out, java.time.Duration.ofSeconds(120))
      try {
        var error: Throwable = null
        val jobs = jobsStarted {
          error = intercept[OutputLock.LockedException](run(in, out.toString))
        }
        assert(jobs == 0)
        val m = error.getMessage
        assert(m.contains("is in use by job job-in-progress (preprocess s3a://elsewhere"), m)
        assert(m.contains("pid " + ProcessHandle.current().pid()), m)
        assert(m.contains(OutputLock.hostName()) && m.contains(System.getProperty("user.name")), m)
      } finally lock.close()
      assert(!Files.exists(out.resolve(OutputLock.FILE)))
      run(in, out.toString) // free again
    }
  }

  test("a job started while another one holds the output is refused; the first one commits") {
    TestFiles.withTempDir("held") { dir =>
      val (a, b) = (gen(dir.resolve("a"), seed = 1L), gen(dir.resolve("b"), seed = 2L))
      val out = dir.resolve("out")
      val pool = Executors.newSingleThreadExecutor()
      System.setProperty(OutputCommitter.STEP_DELAY_PROPERTY, "2000") // the first holds its commit
      try {
        val first = pool.submit(new Callable[JobReport] {
          def call(): JobReport = run(a, out.toString)
        })
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        while (!Files.exists(out.resolve(OutputLock.FILE)) && System.nanoTime() < deadline) {
          Thread.sleep(10)
        }
        val second = intercept[OutputLock.LockedException](run(b, out.toString, overwrite = true))
        assert(second.getMessage.contains(s"is in use by job "), second.getMessage)
        assert(second.getMessage.contains(s"(preprocess $a -> $out)"), second.getMessage)
        assert(first.get(120, TimeUnit.SECONDS).get("images") == 8L)
        assert(ArrowFiles.readAll(out).map(_.key).toSet.size == 8)
      } finally {
        System.clearProperty(OutputCommitter.STEP_DELAY_PROPERTY)
        pool.shutdownNow()
      }
    }
  }

  test("two jobs started together on one output: one commits, the other is refused") {
    TestFiles.withTempDir("race") { dir =>
      val ins = Seq(gen(dir.resolve("a"), seed = 1L), gen(dir.resolve("b"), seed = 2L))
      val out = dir.resolve("out")
      val pool = Executors.newFixedThreadPool(2)
      try {
        val results = ins.map(in => pool.submit(new Callable[Try[JobReport]] {
          def call(): Try[JobReport] = Try(run(in, out.toString, overwrite = true))
        })).map(_.get(120, TimeUnit.SECONDS))
        val refused = results.collect { case scala.util.Failure(e) => e }
        // the second may also start after the first finished, and then it legitimately wins
        assert(refused.forall(_.getMessage.contains("is in use by job")), refused)
        assert(refused.size < 2)
        val rows = ArrowFiles.readAll(out)
        assert(rows.map(_.key) == rows.map(_.key).distinct && rows.size == 8)
        assert(visible(out) == listed(out) + "_manifest.json", "foreign files in " + visible(out))
      } finally pool.shutdownNow()
    }
  }

  test("a dead driver's lock, attempts and unlisted parts are named and removed by the next job") {
    TestFiles.withTempDir("stale") { dir =>
      val in = gen(dir.resolve("in"))
      val out = Files.createDirectories(dir.resolve("out"))
      val deadPid = {
        val p = new ProcessBuilder("true").start()
        p.waitFor()
        p.pid()
      }
      Files.writeString(out.resolve(OutputLock.FILE), s"""{"job":"dead-job","description":"preprocess x -> y",
        |"user":"someone","host":"${OutputLock.hostName()}","pid":$deadPid,"process_start_ms":1,
        |"started":"2026-01-01T00:00:00Z","boot_id":"${OutputLock.bootId()}",
        |"pid_namespace":"${OutputLock.pidNamespace()}"}""".stripMargin)
      Files.createDirectories(out.resolve("_temporary/dead-job"))
      Files.write(out.resolve("_temporary/dead-job/part-00000.attempt-3.arrow"), new Array[Byte](100))
      Files.write(out.resolve("part-00001-deadbeef.arrow"), new Array[Byte](100))

      val report = run(in, out.toString)
      val recovered = report.get("recovered").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      assert(recovered("stale_lock").toString.contains(s"job dead-job (preprocess x -> y)"))
      assert(recovered("stale_lock").toString.contains(s"pid $deadPid"))
      assert(recovered("stale_lock_reason").toString.contains("is not running"))
      assert(recovered("removed").asInstanceOf[java.util.List[String]].asScala.toSet ==
        Set("_temporary/dead-job", "part-00001-deadbeef.arrow"))
      assert(visible(out) == listed(out) + "_manifest.json")
      assert(ArrowFiles.readAll(out).size == 8)
    }
  }

  test("another host's lock is honoured while it is refreshed and taken over once it is not") {
    TestFiles.withTempDir("foreign") { dir =>
      val in = gen(dir.resolve("in"))
      val out = Files.createDirectories(dir.resolve("out"))
      val lockFile = out.resolve(OutputLock.FILE)
      Files.writeString(lockFile, """{"job":"far-job","description":"preprocess a -> b",
        |"user":"u","host":"host-elsewhere.example","pid":1,"process_start_ms":1,
        |"started":"2026-01-01T00:00:00Z"}""".stripMargin, StandardCharsets.UTF_8)
      val e = intercept[OutputLock.LockedException](run(in, out.toString))
      assert(e.getMessage.contains("far-job") && e.getMessage.contains("host-elsewhere.example"))
      Files.setLastModifiedTime(lockFile,
        java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 600000))
      val report = run(in, out.toString, extra = Map("spark.spindle.output.staleLockSeconds" -> "300"))
      val recovered = report.get("recovered").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      assert(recovered("stale_lock").toString.contains("far-job"))
      assert(recovered("stale_lock_reason").toString.contains("not refreshed for"))
    }
  }

  test("an overwrite leaves only the new output; its files never reuse the old names") {
    TestFiles.withTempDir("ow") { dir =>
      val out = dir.resolve("out")
      run(gen(dir.resolve("a"), seed = 1L), out.toString)
      val old = listed(out)
      run(gen(dir.resolve("b"), shards = 3, seed = 2L), out.toString, overwrite = true)
      assert(listed(out).intersect(old).isEmpty)
      assert(visible(out) == listed(out) + "_manifest.json")
      assert(ArrowFiles.readAll(out).size == 12)
    }
  }
}
