package dev.spindle.spark.feed

import java.nio.file.{Files, Path}
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicReference}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.jdk.OptionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.testkit.{LocalClusterFixture, SlowFeedPlugin}
import org.apache.spark.Success
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The feed job on two executor JVMs (local-cluster[2,1,1024], one session for the whole suite):
 * the same per-rank digests as the plan (which local mode also matches) with 1, 2 and 4
 * partitions and threads, and after an executor JVM is killed in the middle of a run.
 */
class FeedClusterSuite extends AnyFunSuite with LocalClusterFixture {
  import FeedData._

  override protected def appName: String = "feed-cluster"

  // slows the feed tasks of the one job that asks for it (SlowFeedPlugin.DelayProperty)
  override protected def sessionConf: Map[String, String] =
    Map("spark.plugins" -> SlowFeedPlugin.ClassName)

  private var in: Path = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    in = tars(dir.resolve("in"), Seq(13, 7, 21, 9, 15)) // 65 samples
  }

  private def feed(args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--input", in.toString, "--size", "8", "--world-size", "2",
      "--batch-size", "4", "--seed", "3") ++ args).toArray)

  /** The full command line from /proc (the JDK's may be cut short), else the JDK's. */
  private def commandLine(p: ProcessHandle): String = {
    val proc = Path.of("/proc", p.pid().toString, "cmdline")
    try new String(Files.readAllBytes(proc), "UTF-8").replace('\u0000', ' ')
    catch { case _: java.io.IOException => p.info().commandLine().toScala.getOrElse("") }
  }

  private def expected = planDigests(manifest(in), spec(3, 0, 2, 4))

  test("two executor JVMs give the plan's digests with 1, 2 and 4 partitions and threads") {
    // --threads bounds how many of a task's rows decode at once on the executor's shared CPU pool
    for ((p, t) <- Seq((1, 4), (2, 2), (4, 1))) {
      val r = feed("--partitions", p.toString, "--threads", t.toString)
      assert(digests(r, 0) == expected, s"partitions $p threads $t")
      assert(ranks(r).map(_("batches")) == Seq(8, 8))
      assert(r.get("master") == "local-cluster[2,1,1024]")
    }
  }

  test("an executor JVM killed mid-run: the job completes with the undisturbed digests") {
    val started = new CountDownLatch(1)
    val failedTasks = new AtomicInteger()
    val working = new AtomicReference[String]() // an executor that has run one of this job's tasks
    spark.sparkContext.addSparkListener(new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
        if (end.reason == Success) {
          working.compareAndSet(null, end.taskInfo.executorId)
          started.countDown()
        } else failedTasks.incrementAndGet()
    })
    implicit val ec: ExecutionContext = ExecutionContext.global
    // 16 partitions of one batch, each task sleeping 400 ms after its batch (SlowFeedPlugin): the
    // job takes several seconds on two executors, so the kill lands while tasks run
    val run = Future {
      spark.sparkContext.setLocalProperty(SlowFeedPlugin.DelayProperty, "400")
      try feed("--partitions", "16")
      finally spark.sparkContext.setLocalProperty(SlowFeedPlugin.DelayProperty, null)
    }
    assert(started.await(120, TimeUnit.SECONDS), "no task finished")
    val children = ProcessHandle.current().descendants().iterator().asScala.toSeq
    // the JVM of an executor that runs tasks, not one still starting
    val executors = children.filter { p =>
      val line = commandLine(p)
      line.contains("CoarseGrainedExecutorBackend") &&
        line.contains(s" --executor-id ${working.get()} ")
    }
    assert(executors.size == 1, s"no JVM of executor ${working.get()} among the test JVM's child " +
      "processes: " + children.map(p => s"${p.pid()} ${commandLine(p).take(200)}").mkString("; "))
    assert(!run.isCompleted, "the run ended before the kill")
    executors.head.destroyForcibly()
    val report = Await.result(run, 240.seconds)
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000 // the listener bus is asynchronous
    while (failedTasks.get() == 0 && System.nanoTime() < deadline) Thread.sleep(100)
    assert(failedTasks.get() > 0, "no task was lost: the kill did not land mid-job")
    assert(digests(report, 0) == expected)
    assert(ranks(report).map(_("batches")) == Seq(8, 8))
    assert(report.get("images") == 64L)
  }
}
