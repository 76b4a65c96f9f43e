package dev.spindle.spark.preprocess
import java.lang.management.ManagementFactory
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.sink.{OutputCommitter, OutputLock}
import dev.spindle.spark.testkit.{ArrowFiles, SparkFixture, TestFiles}
import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.example.GenSample

/**
 * A real driver JVM killed (SIGKILL) in the middle of an `--overwrite` commit: the output stays
 * the old complete one, and the next job names the dead driver's lock and removes its files.
 */
class PreprocessKillSuite extends AnyFunSuite with SparkFixture {
  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.batchSize" -> "4",
    "spark.spindle.partitionBytes" -> "1")

  private def gen(dir: Path, seed: Long): Path = {
    GenSample.run(new GenSample.Options(dir.toString, 3, 4, 48, 32, seed), new Configuration())
    dir
  }

  /**
   * `bin/spindle preprocess` as a separate driver JVM with this JVM's flags and classpath, and
   * `jvm` flags and `extra` settings of its own; each commit step waits 3 s.
   */
  private def driver(in: Path, out: Path, log: Path, jvm: Seq[String] = Nil,
      extra: Map[String, String] = Map.empty): Process = {
    val java = ProcessHandle.current().info().command().get()
    val flags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filterNot(a => a.startsWith("-agentlib") || a.startsWith("-javaagent"))
    val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
    val args = Seq(java) ++ flags ++ jvm ++ Seq(s"-D${OutputCommitter.STEP_DELAY_PROPERTY}=3000",
      "-cp", cp, "dev.spindle.spark.cli.SpindleMain",
      "preprocess", "--input", in.toString, "--output", out.toString, "--overwrite",
      "--master", "local[2]") ++
      (conf ++ extra).toSeq.flatMap { case (k, v) => Seq("--conf", s"$k=$v") }
    new ProcessBuilder(args: _*).redirectErrorStream(true).redirectOutput(log.toFile).start()
  }

  private def signal(p: Process, sig: String): Unit =
    assert(new ProcessBuilder("kill", s"-$sig", p.pid().toString).start().waitFor() == 0)

  private def lockJob(out: Path): Option[String] =
    Try(new ObjectMapper().readTree(out.resolve(OutputLock.FILE).toFile).get("job").asText()).toOption

  private def lockBytes(out: Path): Array[Byte] =
    Try(Files.readAllBytes(out.resolve(OutputLock.FILE))).getOrElse(Array.emptyByteArray)

  private def await(what: String, log: Path, timeoutS: Int)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for $what; driver log:\n" +
        Files.readString(log).linesIterator.toSeq.takeRight(40).mkString("\n"))
      Thread.sleep(5)
    }
  }

  private def names(out: Path): Set[String] =
    if (!Files.exists(out)) Set.empty else Files.list(out).iterator().asScala.map(_.getFileName.toString).filterNot(_.startsWith(".")).toSet

  test("a driver killed mid-commit leaves the old output whole; the next job cleans up after it") {
    TestFiles.withTempDir("kill") { dir =>
      val out = dir.resolve("out")
      val first = PreprocessJob.run(spark, gen(dir.resolve("a"), 1L).toString, out.toString, false,
        conf.asJava)
      val oldManifest = Files.readString(out.resolve("_manifest.json"))
      val oldFiles = ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet
      val oldRows = ArrowFiles.readAll(out)

      val log = dir.resolve("driver.log")
      val child = driver(gen(dir.resolve("b"), 2L), out, log)
      try {
        await("the first committed part", log, 180) {
          names(out).exists(n => n.matches("part-\\d{5}-[0-9a-f]{8}\\.arrow") && !oldFiles(n))
        }
      } finally {
        child.destroyForcibly()
        child.waitFor(30, TimeUnit.SECONDS)
      }
      assert(Files.readString(out.resolve("_manifest.json")) == oldManifest)
      assert(ArrowFiles.readAll(out) == oldRows, "the old output changed under a dying commit")
      assert(Files.readString(out.resolve(OutputLock.FILE)).contains("\"pid\":" + child.pid()))

      val next = PreprocessJob.run(spark, dir.resolve("b").toString, out.toString, true, conf.asJava)
      val recovered = next.get("recovered").asInstanceOf[java.util.Map[String, AnyRef]].asScala
      assert(recovered("stale_lock").toString.contains("pid " + child.pid()))
      assert(recovered("stale_lock_reason").toString.contains("is not running"))
      val removed = recovered("removed").asInstanceOf[java.util.List[String]].asScala
      assert(removed.exists(_.startsWith("_temporary/")), removed)
      assert(removed.exists(_.startsWith("part-")), removed)
      val listed = ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet
      assert(names(out) == listed + "_manifest.json")
      assert(ArrowFiles.readAll(out).size == 12 && first.get("images") == 12L)
      assert(ArrowFiles.readAll(out).map(_.label) != oldRows.map(_.label), "still the old data")
    }
  }

  test("a driver paused past its lease in another PID namespace loses its lock and refuses to commit") {
    TestFiles.withTempDir("lease") { dir =>
      val out = dir.resolve("out")
      val lease = Map("spark.spindle.output.staleLockSeconds" -> "3")
      val log = dir.resolve("paused.log")
      // a driver that every other JVM here takes for one in another PID namespace: its pid,
      // running or not, says nothing about it; only its lease does
      val paused = driver(gen(dir.resolve("a"), 1L), out, log,
        jvm = Seq("-Dspindle.test.pidNamespace=pid:[4026530001]"), extra = lease)
      val pool = java.util.concurrent.Executors.newSingleThreadExecutor()
      try {
        await("the paused driver's first committed part", log, 180) {
          names(out).exists(_.matches("part-\\d{5}-[0-9a-f]{8}\\.arrow"))
        }
        // mid-commit, right after a renewal of its lease is seen: a renewal reads the lock and
        // then writes it, so a pause between the two would write over the lock taken over
        // meanwhile (the window OutputCommitter.commit documents as open); the next renewal is a
        // sixth of the lease away
        val seen = lockBytes(out)
        await("a renewal of the paused driver's lock", log, 30) {
          !java.util.Arrays.equals(lockBytes(out), seen)
        }
        signal(paused, "STOP")
        val stoppedAt = System.nanoTime()
        val pausedJob = lockJob(out).get
        val pausedPart = names(out).filter(_.startsWith("part-"))
        def next() = PreprocessJob.run(spark, dir.resolve("b").toString, out.toString, true,
          (conf ++ lease).asJava)
        gen(dir.resolve("b"), 2L)
        val refused = intercept[OutputLock.LockedException](next())
        assert(refused.getMessage.contains(s"is in use by job $pausedJob"), refused.getMessage)
        assert(System.nanoTime() - stoppedAt < TimeUnit.SECONDS.toNanos(3), "refused within the lease")

        Thread.sleep(math.max(0, 3600 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt)))
        System.setProperty(OutputCommitter.STEP_DELAY_PROPERTY, "1000") // it holds the lock a while
        val taker = pool.submit(new java.util.concurrent.Callable[dev.spindle.spark.metrics.JobReport] {
          def call(): dev.spindle.spark.metrics.JobReport = next()
        })
        await("the lock taken over", log, 60)(lockJob(out).exists(_ != pausedJob))
        val takerJob = lockJob(out).get
        signal(paused, "CONT")
        assert(paused.waitFor(120, TimeUnit.SECONDS), "the paused driver did not end")
        val report = taker.get(180, TimeUnit.SECONDS)
        System.clearProperty(OutputCommitter.STEP_DELAY_PROPERTY)

        assert(paused.exitValue() != 0, "the paused driver committed")
        val said = Files.readString(log)
        assert(said.contains(s"Job $pausedJob lost its lock on") && said.contains(s"to job $takerJob ("), said)
        val recovered = report.get("recovered").asInstanceOf[java.util.Map[String, AnyRef]].asScala
        assert(recovered("stale_lock").toString.contains(s"job $pausedJob"))
        assert(recovered("stale_lock_reason").toString.startsWith("not refreshed for"))
        // (and the temporary copy of a lock renewal the pause may have cut short)
        assert(recovered("removed").asInstanceOf[java.util.List[String]].asScala.toSet
          .filterNot(_.startsWith("." + OutputLock.FILE)) == pausedPart + s"_temporary/$pausedJob")
        val manifest = new ObjectMapper().readTree(out.resolve("_manifest.json").toFile)
        assert(manifest.get("job").asText() == takerJob)
        val listed = ArrowFiles.partFiles(out).map(_.getFileName.toString).toSet
        assert(names(out) == listed + "_manifest.json", "the paused driver left or removed files")
        val rows = ArrowFiles.readAll(out)
        assert(rows.size == 12 && rows.map(_.key).distinct.size == 12)
      } finally {
        System.clearProperty(OutputCommitter.STEP_DELAY_PROPERTY)
        pool.shutdownNow()
        if (paused.isAlive) {
          signal(paused, "CONT")
          paused.destroyForcibly()
        }
        paused.waitFor(30, TimeUnit.SECONDS)
      }
    }
  }
}
