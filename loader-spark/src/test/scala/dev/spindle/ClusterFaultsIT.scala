package dev.spindle

import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.feed.FeedServeSuite.{Python, Trainer}
import dev.spindle.spark.example.GenSample
import dev.spindle.spark.metrics.JobReport
import dev.spindle.spark.plan.{Digest, EpochPlan}
import dev.spindle.spark.testkit.{ArrowFiles, StandaloneCluster, TestFiles}
import dev.spindle.spark.testkit.StandaloneCluster.await
import org.apache.hadoop.conf.Configuration
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * Faults on a real Spark standalone cluster (a master and two one-core workers on 127.0.0.1,
 * separate JVMs), the shaded jar submitted by SparkSubmit as users do: an executor JVM, a worker,
 * the driver and a trainer process killed mid-job, and an output file system that fills up or
 * turns read-only. Each outcome is checked against an undisturbed run. The kills land by test
 * hooks (a slow test file system, the committer's step delay, a plugin that slows feed tasks, the trainer's
 * own SIGKILL), not by timing. The worker kill comes last: the cluster keeps one worker after it.
 */
class ClusterFaultsIT extends AnyFunSuite with BeforeAndAfterAll {
  import Submissions.fileDigests

  private val root = Paths.get("..").toAbsolutePath.normalize
  private var dir: Path = _ // made in beforeAll: JUnit's engine instantiates suites to list them
  private var cluster: StandaloneCluster = _
  private var submit: Submissions = _
  private lazy val images = gen(dir.resolve("images"))
  private lazy val tars = FeedData.tars(dir.resolve("tars"), Seq(13, 7, 21, 9, 15)) // 65 samples
  private lazy val undisturbed = {
    val out = dir.resolve("undisturbed")
    val s = submit.run(Nil, "preprocess", preprocessArgs(out.toString): _*)
    assert(s.code == 0, s.logs)
    fileDigests(out)
  }

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    dir = TestFiles.tempDir("cluster-faults")
    val cp = Files.readString(root.resolve("loader-spark/target/spark-classpath.txt")).trim
    try cluster = StandaloneCluster.start(Files.createDirectories(dir.resolve("cluster")), cp, 2)
    catch { case e: Throwable => TestFiles.deleteRecursively(dir); throw e }
    submit = new Submissions(root, cluster, dir)
  }

  override protected def afterAll(): Unit = {
    try if (cluster != null) cluster.close()
    finally {
      if (dir != null) TestFiles.deleteRecursively(dir)
      super.afterAll()
    }
  }

  private def gen(at: Path): Path = {
    GenSample.run(new GenSample.Options(at.toString, 8, 6, 64, 48, 5L), new Configuration())
    at
  }

  private def preprocessArgs(out: String, extra: String*): Seq[String] =
    Seq("--input", images.toString, "--output", out, "--size", "16", "--batch-size", "4",
      "--conf", "spark.spindle.partitionBytes=1") ++ extra

  /** What a folder holds, without the local file system's `.crc` checksum files. */
  private def names(p: Path): Seq[String] =
    if (!Files.isDirectory(p)) Nil
    else Files.list(p).iterator().asScala.map(_.getFileName.toString).filterNot(_.endsWith(".crc"))
      .toSeq.sorted

  /** The task attempts' files under the output's `_temporary/<job>/`. */
  private def attempts(out: Path): Seq[Path] = {
    val temporary = out.resolve("_temporary")
    names(temporary).flatMap(job => names(temporary.resolve(job)).map(temporary.resolve(job).resolve(_)))
  }

  /** The part files renamed to their committed names (listed by a manifest or not). */
  private def committedParts(out: Path): Seq[String] =
    names(out).filter(_.matches("part-\\d{5}-[0-9a-f]{8}\\.arrow"))

  test("an executor JVM killed mid-preprocess: the output's files equal an undisturbed run's") {
    val out = dir.resolve("executor-killed")
    // a slow output disk: each task holds its attempt file open 2 s, so tasks are in flight
    val job = submit.start(submit.faulty("createDelayMs" -> "2000"), "preprocess",
      preprocessArgs("faulty://" + out): _*)
    await(s"an attempt file; ${job.logs}", 180)(attempts(out).nonEmpty || !job.process.isAlive)
    val tid = attempts(out).head.getFileName.toString.split("attempt-")(1).takeWhile(_.isDigit)
      .toLong
    var executor: Option[ProcessHandle] = None
    await(s"the executor running task $tid", 30) {
      executor = cluster.executorRunning(tid)
      executor.nonEmpty
    }
    executor.get.destroyForcibly()
    assert(job.await() == 0, job.logs)
    assert(job.err.contains(s"Lost task") && job.err.contains("ExecutorLostFailure"), job.logs)
    assert(fileDigests(out) == undisturbed)
    assert(undisturbed.size == 8)
  }

  test("the driver killed mid-commit: nothing visible; the same command again equals an undisturbed run") {
    val out = dir.resolve("driver-killed")
    val args = preprocessArgs(out.toString, "--report", dir.resolve("rerun.json").toString)
    // the driver pauses 1.5 s before each step of its commit (renames, then the manifest's switch)
    val job = submit.start(Seq("--driver-java-options", "-Dspindle.test.commitStepDelayMs=1500"),
      "preprocess", args: _*)
    try await(s"the first committed part; ${job.logs}", 180) {
      committedParts(out).nonEmpty || !job.process.isAlive
    }
    finally {
      job.process.destroyForcibly()
      job.process.waitFor(30, TimeUnit.SECONDS)
    }
    assert(committedParts(out).size < 8 && attempts(out).nonEmpty, s"mid-renames: ${names(out)}")
    assert(!Files.exists(out.resolve("_manifest.json")), "a manifest shows the dead job's files")
    val again = submit.run(Nil, "preprocess", args: _*)
    assert(again.code == 0, again.logs)
    assert(fileDigests(out) == undisturbed)
    val recovered = JobReport.read(dir.resolve("rerun.json")).get("recovered")
      .asInstanceOf[java.util.Map[String, AnyRef]].asScala
    assert(recovered("stale_lock").toString.contains("pid " + job.process.pid()), recovered)
    val listed = ArrowFiles.partFiles(out).map(_.getFileName.toString)
    assert(names(out) == (listed :+ "_manifest.json").sorted, "the dead job's files are gone")
  }

  test("a trainer killed during feed --serve: restarted from its saved state, it gets exactly the rest of its share") {
    val sockets = Files.createDirectories(dir.resolve("sockets"))
    val report = dir.resolve("serve.json")
    val job = submit.start(Nil, "feed", feedArgs(report, "--serve", "--device", "host", "--socket",
      sockets.resolve("bridge-{rank}.sock").toString, "--trainer-timeout", "60"): _*)
    val socket = (0 to 1).map(r => sockets.resolve(s"bridge-$r.sock"))
    await(s"both ranks' sockets; ${job.logs}", 180)(socket.forall(Files.exists(_)) || !job.process.isAlive)
    val saved = dir.resolve("rank0-state.json")
    val killed = new Trainer(socket(0), 0, 2, dir, Seq("--die-after", "3", "--state-out", saved.toString))
    val other = new Trainer(socket(1), 1, 2, dir, Nil)
    assert(killed.await() == 137, "the trainer was to SIGKILL itself holding its third batch")
    val restarted = new Trainer(socket(0), 0, 2, dir, Seq("--state-in", saved.toString))
    assert(restarted.await() == 0, restarted.output)
    assert(other.await() == 0, other.output)
    assert(job.await() == 0, job.logs)
    val plan = EpochPlan.create(FeedData.manifest(tars), FeedData.spec(3, 0, 2, 4))
    assert(killed.batches().map(_.batch) == (0L until 3L) && restarted.batches().map(_.batch) == (3L until 8L))
    val rank0 = (killed.batches() ++ restarted.batches()).flatMap(_.indices)
    assert(Digest.of(rank0.toArray) == plan.rank(0).digest(), "rank 0: no sample lost or served twice")
    assert(Digest.of(other.batches().flatMap(_.indices).toArray) == plan.rank(1).digest())
    assert(digests(report) == FeedData.planDigests(FeedData.manifest(tars), FeedData.spec(3, 0, 2, 4)))
  }

  test("the output disk full: the job fails naming the output's file and commits nothing") {
    val out = dir.resolve("disk-full")
    val job = submit.run(submit.faulty("capacityBytes" -> "3000"), "preprocess",
      preprocessArgs("faulty://" + out): _*)
    assert(job.code == 1, job.logs)
    assert(job.err.contains("No space left on device") && job.err.contains(s"$out/_temporary/"), job.logs)
    assert(names(out).isEmpty, "no manifest, part, temporary or lock file may stay")
  }

  test("the output file system read-only from the commit on: the job fails naming the output and commits nothing") {
    val out = dir.resolve("read-only")
    val job = submit.run(submit.faulty("readOnlyAtCommit" -> "true"), "preprocess",
      preprocessArgs("faulty://" + out): _*)
    assert(job.code == 1, job.logs)
    assert(job.err.contains(s"Cannot commit faulty:$out/_temporary/") && job.err.contains("Permission denied"), job.logs)
    assert(!Files.exists(out.resolve("_manifest.json")) && committedParts(out).isEmpty, names(out))
    assert(attempts(out).size == 8, "the tasks' files stay unlisted (read-only) for the next job to remove")
  }

  test("a worker killed mid-feed: the job completes on the other worker with the undisturbed digests") {
    val before = (0 to 1).flatMap(cluster.latestApp).toSet
    // 8 one-batch partitions, each task sleeping 1 s after its batch (SlowFeedPlugin): several
    // seconds of tasks
    val job = submit.start(submit.schedulerLog ++ submit.slowFeed(1000), "feed",
      feedArgs(dir.resolve("feed.json"), "--partitions", "8"): _*)
    def inFlight() = (0 to 1).flatMap(w => cluster.latestApp(w).filterNot(before)
      .flatMap(taskInFlight).map(w -> _)).headOption
    var busy: Option[(Int, String)] = None
    await(s"a feed task in flight; ${job.logs}", 180) {
      val first = inFlight()
      Thread.sleep(200) // a task still running 200 ms later is a feed task, not a short planning one
      busy = inFlight().filter(first.contains)
      busy.nonEmpty || !job.process.isAlive
    }
    cluster.killWorker(busy.get._1)
    assert(job.await() == 0, job.logs)
    // a task lost with its worker is not the task's fault: the scheduler logs it at INFO only
    assert("Starting task \\d+\\.1 in stage".r.findFirstIn(job.err).nonEmpty,
      s"no task ran again after worker ${busy.get._1} died while its executor ran ${busy.get._2}; ${job.logs}")
    // an undisturbed run's digests are the plan's (FeedClusterSuite, FeedJobSuite)
    assert(digests(dir.resolve("feed.json")) ==
      FeedData.planDigests(FeedData.manifest(tars), FeedData.spec(3, 0, 2, 4)))
  }

  private def feedArgs(report: Path, extra: String*): Seq[String] =
    Seq("--input", tars.toString, "--size", "8", "--world-size", "2", "--batch-size", "4", "--seed",
      "3", "--report", report.toString) ++ extra

  /** Per rank, the digest of epoch 0 in a feed report. */
  private def digests(report: Path): Seq[String] =
    JobReport.read(report).get("ranks").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]]
      .asScala.filter(_.get("epoch") == 0).sortBy(_.get("rank").asInstanceOf[Int])
      .map(_.get("digest").toString).toSeq

  /** The line of an executor of `app` (one core: a task at a time) naming the task it runs. */
  private def taskInFlight(app: Path): Option[String] = names(app).map(app.resolve(_).resolve("stderr"))
    .filter(Files.isRegularFile(_)).flatMap { log =>
      val lines = Files.readAllLines(log).asScala
      val running = lines.filter(_.contains("Running task "))
      if (running.size > lines.count(_.contains("Finished task "))) running.lastOption else None
    }.headOption
}
