package dev.spindle.spark.progress

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.preprocess.{PreprocessJob, TestSamples}
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.scalatest.concurrent.Eventually
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.{Seconds, Span}

/**
 * On a real local Spark: every Spindle job carries a job group and a description the UI shows
 * (`spark.job.description` as a SparkListener sees it), and the ProgressListener's cluster-wide
 * count reaches the job's total.
 */
class JobLabelSuite extends AnyFunSuite with SparkFixture with Eventually {
  override protected def extraConf: Map[String, String] =
    Map("spark.executor.heartbeatInterval" -> "500ms")

  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.batchSize" -> "8",
    "spark.spindle.partitionBytes" -> "1")

  implicit override val patienceConfig: PatienceConfig = PatienceConfig(Span(10, Seconds))

  /** (group, description) of every job started while `body` runs. */
  private def jobs(body: => Unit): Seq[(String, String)] = {
    val seen = new ConcurrentLinkedQueue[(String, String)]()
    val listener = new SparkListener {
      override def onJobStart(e: SparkListenerJobStart): Unit =
        seen.add((e.properties.getProperty("spark.jobGroup.id"),
          e.properties.getProperty("spark.job.description")))
    }
    spark.sparkContext.addSparkListener(listener)
    try {
      body
      val before = seen.size
      eventually(assert(seen.size >= before && seen.asScala.exists(_._2 != null)))
      Thread.sleep(300) // the listener bus delivers the last job starts a little later
      seen.asScala.toSeq
    } finally spark.sparkContext.removeSparkListener(listener)
  }

  /** Runs `body` with a ProgressListener listening to the context, removed after. */
  private def withProgress[T](body: ProgressListener => T): T = {
    val progress = new ProgressListener()
    spark.sparkContext.addSparkListener(progress)
    try body(progress) finally spark.sparkContext.removeSparkListener(progress)
  }

  test("preprocess: group spindle-<job id>, description with the input, shards and samples; progress reaches the total") {
    TestFiles.withTempDir("label-pre") { dir =>
      val in = dir.resolve("in")
      TestSamples.generate(in, 3, 20, 48, 32, 1L)
      val progress = new ProgressListener()
      spark.sparkContext.addSparkListener(progress)
      val started = try jobs {
        PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false, conf.asJava)
      } finally spark.sparkContext.removeSparkListener(progress)
      // every job is described: the shard count (a helper job) and the preprocess job itself
      assert(started.forall(_._2 != null), started)
      val (counting, labelled) = started.partition(_._2.startsWith("count shards: "))
      assert(labelled.size == 1, started)
      val (group, description) = labelled.head
      assert(group.startsWith("spindle-"), group)
      assert(description == s"preprocess $in (3 shards, 60 samples, 3 tasks)", description)
      assert(counting.size == 1, started)
      assert(counting.head._1 == "spindle-helper", counting)
      assert(counting.head._2.matches(
        "count shards: 3 files, file:.*/in/[^/]+\\.tar … file:.*/in/[^/]+\\.tar"), counting)
      eventually {
        val s = progress.snapshot()
        assert(s.started() && s.label() == "preprocess" && s.total() == 60)
        assert(s.samples() == 60 && s.quarantined() == 0 && s.bytes() > 0, s)
        // every stage of the tasks' pipelines reported its time; the bottleneck is one of them
        assert(s.stages().keySet().asScala == Set("read", "decode", "batch", "sink"), s)
        assert(s.stages().values().asScala.forall(t => t(1) > 0 && t(0) <= t(1)), s)
      }
      // the thread's properties are given back: a later job is not labelled
      spark.sparkContext.parallelize(Seq(1, 2)).count()
      assert(spark.sparkContext.getLocalProperty("spark.job.description") == null)
      assert(spark.sparkContext.getLocalProperty(JobLabel.TOTAL) == null)
    }
  }

  test("the spindle DataSource's tasks count their samples and stage times for the progress line") {
    TestFiles.withTempDir("label-ds") { dir =>
      val in = dir.resolve("in")
      TestSamples.generate(in, 3, 20, 48, 32, 3L)
      withProgress { progress =>
        // outside a label a query leaves the thread's properties alone
        assert(spark.read.format("spindle").option("size", "16").load(in.toString).count() == 60)
        assert(spark.sparkContext.getLocalProperty(JobLabel.TOTAL) == null)
        val label = JobLabel.of(spark.sparkContext, "g", "datasource", "d", 0)
        try {
          val df = spark.read.format("spindle").option("size", "16").load(in.toString)
          assert(df.select("index").collect().length == 60)
        } finally label.close()
        assert(spark.sparkContext.getLocalProperty(JobLabel.TOTAL) == null, "given back")
        eventually {
          val s = progress.snapshot()
          assert(s.started() && s.label() == "datasource" && s.samples() == 60 && s.bytes() > 0, s)
          assert(s.total() == 60, "the scan told its label the input's samples")
          assert(s.stages().keySet().asScala == Set("read", "decode", "batch", "sink"), s)
        }
      }
    }
  }

  test("jobs that continue earlier work (a restarted train run) count on from the samples done") {
    withProgress { progress =>
      val label = JobLabel.of(spark.sparkContext, "g", "train epochs 0..1", "d", 100)
      try {
        spark.sparkContext.parallelize(Seq(1, 2)).count()
        eventually(assert(progress.snapshot().started() && progress.snapshot().samples() == 0))
        label.continuing(40)
        spark.sparkContext.parallelize(Seq(1, 2)).count()
        eventually {
          val s = progress.snapshot()
          assert(s.samples() == 40 && s.total() == 100, s)
        }
      } finally label.close()
      assert(spark.sparkContext.getLocalProperty(JobLabel.BEFORE) == null)
    }
  }

  test("feed: one labelled job per epoch, `feed epoch e of 0..E-1 (W ranks, batches ...)`") {
    TestFiles.withTempDir("label-feed") { dir =>
      val in = dir.resolve("in")
      TestSamples.generate(in, 2, 16, 48, 32, 2L)
      val started = jobs {
        FeedCommand.run(spark, Array("--input", in.toString, "--world-size", "2", "--epochs", "2",
          "--size", "16", "--batch-size", "4"))
      }
      val descriptions = started.map(_._2).filter(d => d != null && d.startsWith("feed "))
      assert(descriptions == Seq(
        "feed epoch 0 of 0..1 (2 ranks, batches 0..3 of 4 per rank)",
        "feed epoch 1 of 0..1 (2 ranks, batches 0..3 of 4 per rank)"), started)
      // the epochs share the run's group; the shard count before them is a described helper job
      val (counting, epochs) = started.partition(_._2.startsWith("count shards: "))
      assert(started.forall(_._2 != null), started)
      assert(epochs.map(_._1).distinct.size == 1, started)
      assert(counting.map(_._2) == Seq(s"count shards: 2 files, file:$in/shard-00000.tar … " +
        s"file:$in/shard-00001.tar"), started)
    }
  }
}
