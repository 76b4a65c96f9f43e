package dev.spindle.spark.feed

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest
import java.util.HexFormat
import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import dev.spindle.spark.config.SpindleConfig
import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.plan.{Digest, EpochPlan, Remainder}
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.testkit.{ParquetInputs, SparkFixture, TestFiles}
import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.serve.ExecutorServing

/**
 * `feed --serve` end to end on local Spark: rank tasks feed host shared-memory feeders, Python
 * trainer processes (loader-gpu/python/tests/trainer_check.py) lease the batches through the
 * executor's trainer bridge, and what they saw is compared with the epoch plan.
 */
class FeedServeSuite extends AnyFunSuite with SparkFixture {
  import FeedData._
  import FeedServeSuite._

  private implicit val ec: ExecutionContext = ExecutionContext.global
  private val Size = 8
  private val Counts = Seq(13, 7, 21, 9, 15) // 65 samples: world 2 x 8 batches of 4, world 1 x 16

  override protected def afterAll(): Unit = {
    try {
      ExecutorServing.closeAll()
      val dir = "/dev/shm/spindle-" + System.getProperty("user.name") + "/"
      val left = Files.list(Paths.get("/proc/self/fd")).iterator().asScala
        .flatMap(fd => scala.util.Try(Files.readSymbolicLink(fd).toString).toOption)
        .filter(_.startsWith(dir)).toList
      assert(left.isEmpty, s"shared-memory slabs left open: $left")
    } finally super.afterAll()
  }

  private def args(in: Path, socket: Path, world: Int, timeoutS: Int, extra: String*): Array[String] =
    (Seq("--input", in.toString, "--size", Size.toString, "--batch-size", "4", "--seed", "3",
      "--world-size", world.toString, "--serve", "--device", "host", "--socket", socket.toString,
      "--trainer-timeout", timeoutS.toString) ++ extra).toArray

  private def start(a: Array[String]): Future[FeedReport] = Future(FeedCommand.run(spark, a))

  /** Starts serving `in` on `socket` (`args`) and waits for the bridge's socket. */
  private def serve(in: Path, socket: Path, world: Int, timeoutS: Int, extra: String*): Future[FeedReport] = {
    val job = start(args(in, socket, world, timeoutS, extra: _*))
    awaitSocket(socket, job)
    job
  }

  /** Where a test's bridge listens: `dir`/run/bridge.sock. */
  private def socketIn(dir: Path): Path = dir.resolve("run").resolve("bridge.sock")

  /** Tar shards of `Counts` under `dir`/in, their manifest, and the test's bridge socket. */
  private def tarInput(dir: Path): (Path, Manifest, Path) = {
    val in = tars(dir.resolve("in"), Counts)
    (in, manifest(in), socketIn(dir))
  }

  /** The messages of `e` and its causes, joined with " / ". */
  private def causes(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")

  /** A trainer per rank of `world`, each with no extra flags. */
  private def trainersOf(socket: Path, world: Int, dir: Path): Seq[Trainer] =
    (0 until world).map(r => new Trainer(socket, r, world, dir, Seq.empty))

  private def awaitSocket(socket: Path, job: Future[_]): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    while (!Files.exists(socket) && !job.isCompleted && System.nanoTime() < deadline) Thread.sleep(20)
    assert(Files.exists(socket), s"no bridge socket at $socket; job: ${job.value}")
  }

  /** Waits until the bridge on `socket` serves a run other than the one with token `earlier`. */
  private def awaitNewRun(socket: Path, earlier: String, job: Future[_]): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    while ((!Files.exists(socket) || runToken(socket) == earlier) && !job.isCompleted
      && System.nanoTime() < deadline) Thread.sleep(20)
    assert(runToken(socket) != earlier, s"the bridge kept the earlier run's token; job: ${job.value}")
  }

  /** Checks every batch a trainer saw against the plan: number, indices, keys, labels, bytes. */
  private def assertPlanned(m: Manifest, plan: EpochPlan, rank: Int, got: Seq[Line],
      numbers: Seq[Long], key: (Int, Int) => String = (s, j) => f"s${s}_$j%04d"): Unit = {
    assert(got.map(_.batch) == numbers, s"rank $rank")
    val transform = SpindleConfig.uint8Transform(Map("spark.spindle.image.size" -> Size.toString).asJava)
    val offsets = m.offsets()
    for (l <- got) {
      val planned = plan.rank(rank).batch(l.batch.toInt).toSeq
      assert(l.indices == planned, s"rank $rank batch ${l.batch}")
      val named = planned.map { i =>
        val s = offsets.lastIndexWhere(_ <= i)
        (s, (i - offsets(s)).toInt)
      }
      assert(l.keys == named.map(key.tupled), s"keys of batch ${l.batch}")
      assert(l.labels == named.map { case (_, j) => (j % 10).toLong })
      assert(l.sha256 == sha256(named.zip(planned).map { case ((s, j), i) =>
        pixels(transform, png(s * 1000 + j), i) }.reduce(_ ++ _)), s"image bytes of batch ${l.batch}")
      assert(l.shape == s"4x${Size}x${Size}x3")
    }
  }

  test("two ranks served through the bridge get disjoint, equal, complete shares with the planned bytes") {
    TestFiles.withTempDir("serve-two") { dir =>
      val (in, m, socket) = tarInput(dir)
      val plan = EpochPlan.create(m, spec(3, 0, 2, 4))
      val job = serve(in, socket, 2, 60)
      val trainers = trainersOf(socket, 2, dir)
      trainers.foreach(t => assert(t.await() == 0, t.output))
      val report = Await.result(job, 3.minutes)
      trainers.zipWithIndex.foreach { case (t, r) => assertPlanned(m, plan, r, t.batches(), 0L until 8L) }
      val shares = trainers.map(_.batches().flatMap(_.indices))
      assert(shares.map(_.size) == Seq(32, 32) && shares(0).toSet.intersect(shares(1).toSet).isEmpty)
      assert(shares.map(s => Digest.of(s.toArray)) == planDigests(m, spec(3, 0, 2, 4)))
      assert(digests(report, 0) == planDigests(m, spec(3, 0, 2, 4)))
      assert(ranks(report).forall(r => r("socket") == socket.toString && r("trainer_resume") == -1L))
      val feeders = report.get("feeders").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]].asScala
      assert(feeders.map(_.get("ranks").toString).sorted == Seq("[0]", "[1]"))
      for (f <- feeders) {
        val stats = f.get("stats").asInstanceOf[java.util.Map[String, AnyRef]]
        assert(stats.get("h2d_bytes").asInstanceOf[Number].longValue >= 8L * 4 * Size * Size * 3)
        Seq("h2d_gbps", "copy_ms", "consumer_wait_ms", "producer_blocked_ms", "slots")
          .foreach(k => assert(stats.containsKey(k), k))
      }
      val lastLine = trainers(0).lines().last
      assert(lastLine.kind == "END" && lastLine.fields(2).contains("\"batchesConsumed\": [8, 0]"))
    }
  }

  test("trainers get loss weight 0 exactly on padded rows and stand-ins of quarantined samples") {
    TestFiles.withTempDir("serve-weights") { dir =>
      val in = tars(dir.resolve("in"), Seq(13, 7, 21), bad = Set((1, 3))) // 41 samples
      val m = manifest(in)
      val plan = EpochPlan.create(m, spec(3, 0, 2, 4, Remainder.PAD))
      val bad = m.offsets()(1) + 3
      val socket = socketIn(dir)
      val job = serve(in, socket, 2, 60, "--remainder", "PAD", "--conf", "spark.spindle.maxFailures=3")
      val trainers = trainersOf(socket, 2, dir)
      trainers.foreach(t => assert(t.await() == 0, t.output))
      Await.result(job, 3.minutes)
      var zeros = 0
      for ((t, r) <- trainers.zipWithIndex; l <- t.batches()) {
        val rows = plan.rank(r).batch(l.batch.toInt).toSeq
        val padded = plan.rank(r).paddedIn(l.batch.toInt)
        val expected = rows.indices.map(i => if (i >= rows.size - padded || rows(i) == bad) 0.0 else 1.0)
        assert(l.indices == rows && l.weights == expected, s"rank $r batch ${l.batch}")
        zeros += expected.count(_ == 0.0)
      }
      assert(trainers.flatMap(_.batches()).exists(_.indices.contains(bad)), "bad sample served")
      assert(trainers.map(_.batches().size).sum == 12 && zeros >= 2, s"$zeros zero weights")
    }
  }

  test("stand-ins and padding are served with their own keys, label -100 and weight 0; the README's loss recipe runs on them") {
    TestFiles.withTempDir("serve-standins") { dir =>
      val counts = Seq(13, 7, 21) // 41 samples: world 2, batches of 4, PAD: 6 batches per rank
      val planned = EpochPlan.create(manifest(tars(dir.resolve("plan"), counts)), spec(3, 0, 2, 4, Remainder.PAD))
      // rank 0's batch 1 all bad; rank 1's batch 2: its first and third rows
      val badIndices = planned.rank(0).batch(1).toSet ++ Seq(0, 2).map(planned.rank(1).batch(2)(_))
      val offsets = manifest(dir.resolve("plan")).offsets()
      def named(i: Long): (Int, Int) = {
        val s = offsets.lastIndexWhere(_ <= i)
        (s, (i - offsets(s)).toInt)
      }
      val in = tars(dir.resolve("in"), counts, badIndices.map(named))
      val plan = EpochPlan.create(manifest(in), spec(3, 0, 2, 4, Remainder.PAD))
      val socket = socketIn(dir)
      val job = serve(in, socket, 2, 60, "--remainder", "PAD", "--conf", "spark.spindle.maxFailures=10")
      val trainers = (0 until 2).map(r => new Trainer(socket, r, 2, dir, Seq("--recipe")))
      trainers.foreach(t => assert(t.await() == 0, t.output)) // the recipe raised nowhere
      Await.result(job, 3.minutes)
      val transform = SpindleConfig.uint8Transform(Map("spark.spindle.image.size" -> Size.toString).asJava)
      val rowBytes = Size * Size * 3
      var ignored = 0
      for ((t, r) <- trainers.zipWithIndex; (l, loss) <- t.batches().zip(t.lines().filter(_.kind == "L"))) {
        val rows = plan.rank(r).batch(l.batch.toInt).toSeq
        val padded = plan.rank(r).paddedIn(l.batch.toInt)
        val what = s"rank $r batch ${l.batch}"
        val ignore = rows.indices.map(i => i >= rows.size - padded || badIndices(rows(i)))
        assert(l.indices == rows, what)
        assert(l.keys == rows.map(named).map { case (s, j) => f"s${s}_$j%04d" }, what)
        assert(l.labels == rows.indices.map(i => if (ignore(i)) -100L else (named(rows(i))._2 % 10).toLong), what)
        assert(l.weights == ignore.map(if (_) 0.0 else 1.0), what)
        val good = rows.filterNot(badIndices)
        val standIn = good.headOption.map(i => pixels(transform, png(named(i)._1 * 1000 + named(i)._2), i))
          .getOrElse(new Array[Byte](rowBytes))
        val bytes = rows.map(i => if (badIndices(i)) standIn else {
          val (s, j) = named(i)
          pixels(transform, png(s * 1000 + j), i)
        }).reduce(_ ++ _)
        assert(l.sha256 == sha256(bytes), s"image bytes of $what")
        // the recipe: ignored rows contribute 0; the loss is the mean over the real rows
        assert(loss.batch == l.batch, what)
        val perRow = loss.fields(2).split(',').toSeq.map(_.toDouble)
        val real = perRow.zip(ignore).collect { case (v, false) => v }
        assert(perRow.zip(ignore).forall { case (v, i) => !i || v == 0.0 }, s"$what: $perRow")
        assert(math.abs(loss.fields(3).toDouble - real.sum / math.max(1, real.size)) < 1e-5, s"$what: $loss")
        ignored += ignore.count(identity)
      }
      assert(trainers(0).lines().filter(_.kind == "L")(1).fields(3).toDouble == 0.0, "a batch of stand-ins only")
      assert(trainers.map(_.batches().size) == Seq(6, 6) && ignored >= 6, s"$ignored ignored rows")
    }
  }

  test("a preprocess output is served like its shards: the planned keys, labels and bytes, nothing decoded") {
    TestFiles.withTempDir("serve-prep") { dir =>
      val prep = Preprocessed.write(spark, tars(dir.resolve("in"), Counts), dir.resolve("prep"), "arrow")
      val m = manifest(prep) // a part file per shard: the shards' numbering
      val plan = EpochPlan.create(m, spec(3, 0, 2, 4))
      val socket = socketIn(dir)
      val job = serve(prep, socket, 2, 60)
      val trainers = trainersOf(socket, 2, dir)
      trainers.foreach(t => assert(t.await() == 0, t.output))
      val report = Await.result(job, 3.minutes)
      // the bytes each trainer got are those of decoding the original PNGs (assertPlanned)
      trainers.zipWithIndex.foreach { case (t, r) => assertPlanned(m, plan, r, t.batches(), 0L until 8L) }
      assert(digests(report, 0) == planDigests(m, spec(3, 0, 2, 4)))
      assert(report.get("images_decoded") == 0L && report.get("samples_read") == 64L)
    }
  }

  /** `host_copy_bytes`, `h2d_bytes` less `in_place_bytes`, `zero_copy_batches`, `batches_copied` of each feeder. */
  private def feederCopies(report: FeedReport): Seq[(Long, Long, Long, Long)] =
    report.get("feeders").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]].asScala.toSeq.map { f =>
      val s = f.get("stats").asInstanceOf[java.util.Map[String, AnyRef]]
      def n(k: String) = s.get(k).asInstanceOf[Number].longValue
      (n("host_copy_bytes"), n("h2d_bytes") - n("in_place_bytes"), n("zero_copy_batches"), n("batches_copied"))
    }

  test("tar shards served on the host device are decoded straight into the ring: host_copies_per_sample 0") {
    TestFiles.withTempDir("serve-zero-copy") { dir =>
      val (in, m, socket) = tarInput(dir)
      val plan = EpochPlan.create(m, spec(3, 0, 2, 4))
      val job = serve(in, socket, 2, 60)
      val trainers = trainersOf(socket, 2, dir)
      trainers.foreach(t => assert(t.await() == 0, t.output))
      val report = Await.result(job, 3.minutes)
      trainers.zipWithIndex.foreach { case (t, r) => assertPlanned(m, plan, r, t.batches(), 0L until 8L) }
      assert(report.get("host_copies_per_sample") == 0.0)
      assert(report.hostCopiesPerSample().getAsDouble == 0.0)
      val feeders = feederCopies(report)
      assert(feeders.size == 2)
      for ((staged, h2d, written, copied) <- feeders) {
        assert(staged == 0 && h2d == 0, "nothing staged, nothing copied: every row written in place")
        assert(written == copied && copied >= 8, "every batch was written into its slot")
      }
      val fed = FeedCommand.run(spark, Array("--input", in.toString, "--size", Size.toString,
        "--batch-size", "4", "--seed", "3", "--world-size", "2"))
      assert(fed.get("host_copies_per_sample") == 0.0, "the verifier's batches too: decoded in place")
      assert(digests(fed, 0) == digests(report, 0))
    }
  }

  test("a preprocess output is copied twice per sample (reader, then row): host_copies_per_sample 2") {
    TestFiles.withTempDir("serve-prep-copies") { dir =>
      for (format <- Seq("arrow", "parquet")) {
        val prep = Preprocessed.write(spark, tars(dir.resolve(s"in-$format"), Counts),
          dir.resolve(s"prep-$format"), format)
        val socket = dir.resolve(s"run-$format").resolve("bridge.sock")
        val job = serve(prep, socket, 2, 60)
        trainersOf(socket, 2, dir).foreach(t => assert(t.await() == 0, t.output))
        val report = Await.result(job, 3.minutes)
        assert(report.get("images") == 64L && report.get("samples_read") == 64L)
        assert(report.get("host_copies_per_sample") == 2.0, format)
        assert(feederCopies(report).forall(_._1 == 0), "the rows were copied into the ring's slots, not staged")
        val fed = FeedCommand.run(spark, Array("--input", prep.toString, "--batch-size", "4",
          "--seed", "3", "--world-size", "2"))
        assert(fed.get("host_copies_per_sample") == 2.0, format)
      }
    }
  }

  test("Parquet shards are served like tar shards: the planned keys, labels and bytes; digests equal feed's") {
    TestFiles.withTempDir("serve-parquet") { dir =>
      val in = ParquetInputs.spark(spark, dir.resolve("in"), rows(Counts), struct = true)
      val m = manifest(in)
      val plan = EpochPlan.create(m, spec(3, 0, 2, 4))
      val socket = socketIn(dir)
      val job = serve(in, socket, 2, 60)
      val trainers = trainersOf(socket, 2, dir)
      trainers.foreach(t => assert(t.await() == 0, t.output))
      val report = Await.result(job, 3.minutes)
      trainers.zipWithIndex.foreach { case (t, r) =>
        assertPlanned(m, plan, r, t.batches(), 0L until 8L, (s, j) => f"shard-$s%03d.parquet#$j")
      }
      val fed = FeedCommand.run(spark, Array("--input", in.toString, "--size", Size.toString,
        "--batch-size", "4", "--seed", "3", "--world-size", "2"))
      assert(digests(report, 0) == digests(fed, 0))
      assert(digests(report, 0) == planDigests(m, spec(3, 0, 2, 4)))
      assert(report.get("images_decoded") == 64L)
    }
  }

  test("a trainer killed mid-epoch and restarted from its saved state resumes exactly where it left off") {
    TestFiles.withTempDir("serve-kill") { dir =>
      val (in, m, socket) = tarInput(dir)
      val plan = EpochPlan.create(m, spec(3, 0, 1, 4))
      val job = serve(in, socket, 1, 60)
      val saved = dir.resolve("state.json")
      val first = new Trainer(socket, 0, 1, dir, Seq("--die-after", "5", "--state-out", saved.toString))
      assert(first.await() != 0, "the trainer was to kill itself")
      val second = new Trainer(socket, 0, 1, dir, Seq("--state-in", saved.toString))
      assert(second.await() == 0, second.output)
      val report = Await.result(job, 3.minutes)
      assertPlanned(m, plan, 0, first.batches(), 0L until 5L)
      assertPlanned(m, plan, 0, second.batches(), 5L until 16L)
      val all = (first.batches() ++ second.batches()).flatMap(_.indices)
      assert(Digest.of(all.toArray) == plan.rank(0).digest(), "no loss, no duplicates")
      assert(digests(report, 0) == Seq(plan.rank(0).digest()))
    }
  }

  test("a feed job restarted while its trainer resumes from a saved state starts the rank there") {
    TestFiles.withTempDir("serve-restart") { dir =>
      val (in, m, socket) = tarInput(dir)
      val plan = EpochPlan.create(m, spec(3, 0, 1, 4))
      val saved = dir.resolve("state.json")
      val failed = serve(in, socket, 1, 8)
      val failedToken = runToken(socket)
      val first = new Trainer(socket, 0, 1, dir, Seq("--die-after", "3", "--state-out", saved.toString))
      assert(first.await() != 0)
      assert(Await.ready(failed, 3.minutes).value.get.isFailure, "the job lost its trainer and must fail")

      val job = start(args(in, socket, 1, 60))
      awaitNewRun(socket, failedToken, job) // a new run: its trainer needs the new token
      val second = new Trainer(socket, 0, 1, dir, Seq("--state-in", saved.toString))
      assert(second.await() == 0, second.output)
      val report = Await.result(job, 3.minutes)
      assertPlanned(m, plan, 0, first.batches(), 0L until 3L)
      assertPlanned(m, plan, 0, second.batches(), 3L until 16L)
      val r0 = ranks(report).head
      assert(r0("first_batch") == 3 && r0("batches") == 13 && r0("trainer_resume") == 3L)
      assert(r0("digest") == Digest.of(plan.rank(0).indices(3, 16)))
      assert(report.get("samples_read") == 13L * 4, "the 3 consumed batches were not read again")
    }
  }

  test("two epochs: the trainer opens one loader per epoch and gets each epoch's planned share") {
    TestFiles.withTempDir("serve-epochs") { dir =>
      val (in, m, socket) = tarInput(dir)
      val job = serve(in, socket, 1, 60, "--epochs", "2")
      val out = dir.resolve("epochs.txt")
      val code = Seq(
        "import sys; sys.path.insert(0, sys.argv[1])",
        "from spindle_bridge import SpindleLoader",
        "with open(sys.argv[3], 'w') as out:",
        "    for epoch in range(2):",
        "        with SpindleLoader(sys.argv[2], 0, 1, timeout_s=60, as_numpy=True) as loader:",
        "            for images, labels in loader:",
        "                out.write(','.join(map(str, loader.last.indices)) + '\\n')",
        "            out.write('END %d\\n' % loader.state_dict()['epoch'])").mkString("\n")
      val pb = new ProcessBuilder(Python, "-c", code, Script.getParent.getParent.toString,
        socket.toString, out.toString).redirectErrorStream(true)
      pb.environment().put("SPINDLE_RUN_TOKEN", runToken(socket))
      val p = pb.start()
      val log = new String(p.getInputStream.readAllBytes(), StandardCharsets.UTF_8)
      assert(p.waitFor() == 0, log)
      val report = Await.result(job, 3.minutes)
      val lines = Files.readAllLines(out).asScala.toSeq
      val ends = lines.zipWithIndex.filter(_._1.startsWith("END")).map(_._2)
      assert(lines.filter(_.startsWith("END")) == Seq("END 0", "END 1") && ends == Seq(16, 33))
      for ((epoch, from) <- Seq(0 -> 0, 1 -> 17)) {
        val got = lines.slice(from, from + 16).flatMap(_.split(',').map(_.toLong))
        assert(Digest.of(got.toArray) == planDigests(m, spec(3, epoch, 1, 4)).head, s"epoch $epoch")
        assert(digests(report, epoch) == planDigests(m, spec(3, epoch, 1, 4)))
      }
    }
  }

  test("a trainer stating an out-of-range resume is refused; the job serves the rank to the next one") {
    TestFiles.withTempDir("serve-range") { dir =>
      val (in, m, socket) = tarInput(dir)
      val plan = EpochPlan.create(m, spec(3, 0, 1, 4))
      val job = serve(in, socket, 1, 60)
      val bogus = dir.resolve("bogus.json")
      Files.writeString(bogus, """{"worldSize": 1, "batchesConsumed": [1099511627776]}""")
      val wrong = new Trainer(socket, 0, 1, dir, Seq("--state-in", bogus.toString, "--expect-error"))
      assert(wrong.await() == 0, wrong.output)
      assert(wrong.lines().head.fields(1) == "BAD_RESUME", wrong.lines().head)
      assert(wrong.lines().head.fields(2).contains("says 1099511627776 batches consumed, but rank 0 "
        + "has 16 batches to serve (must be 0..16, or -1 for no state)"), wrong.lines().head)
      val good = new Trainer(socket, 0, 1, dir, Seq.empty)
      assert(good.await() == 0, good.output)
      val report = Await.result(job, 3.minutes)
      assertPlanned(m, plan, 0, good.batches(), 0L until 16L)
      assert(digests(report, 0) == Seq(plan.rank(0).digest()))
    }
  }

  test("a trainer of an earlier run (its token) is refused; this run's trainer gets the whole share") {
    TestFiles.withTempDir("serve-stale") { dir =>
      val (in, m, socket) = tarInput(dir)
      val plan = EpochPlan.create(m, spec(3, 0, 1, 4))
      val first = serve(in, socket, 1, 60)
      val earlierToken = runToken(socket)
      val earlier = new Trainer(socket, 0, 1, dir, Seq.empty)
      assert(earlier.await() == 0, earlier.output)
      Await.result(first, 3.minutes)

      val job = start(args(in, socket, 1, 60))
      awaitNewRun(socket, earlierToken, job)
      val stale = new Trainer(socket, 0, 1, dir, Seq("--token", earlierToken, "--expect-error"))
      assert(stale.await() == 0, stale.output)
      assert(stale.lines().head.fields(1) == "BAD_TOKEN", stale.lines().head)
      val current = new Trainer(socket, 0, 1, dir, Seq.empty)
      assert(current.await() == 0, current.output)
      val report = Await.result(job, 3.minutes)
      assertPlanned(m, plan, 0, current.batches(), 0L until 16L)
      assert(digests(report, 0) == Seq(plan.rank(0).digest()))
    }
  }

  test("no trainer: the rank task fails after the trainer timeout, naming the socket and the rank") {
    TestFiles.withTempDir("serve-none") { dir =>
      val in = tars(dir.resolve("in"), Seq(9))
      val socket = socketIn(dir)
      val e = intercept[Exception](FeedCommand.run(spark, args(in, socket, 1, 2)))
      val msg = causes(e)
      assert(msg.contains(s"No trainer of rank 0 connected to $socket") && msg.contains("within 2 s"), msg)
      assert(msg.contains(s"SPINDLE_RUN_TOKEN set to the contents of $socket.token"), msg)
    }
  }

  test("a trainer that dies holding a batch and is not replaced fails its rank naming the rank, not the lease") {
    TestFiles.withTempDir("serve-died") { dir =>
      val in = tars(dir.resolve("in"), Seq(40))
      val socket = socketIn(dir)
      val job = serve(in, socket, 1, 3)
      val t = new Trainer(socket, 0, 1, dir, Seq("--die-after", "2", "--state-out",
        dir.resolve("state.json").toString))
      assert(t.await() == 137, t.output) // SIGKILL while holding batch 1
      val e = intercept[Exception](Await.result(job, 3.minutes))
      val msg = causes(e)
      assert(msg.contains("Trainer of rank 0 (connection") && msg.contains("disconnected without BYE")
        && msg.contains("holding batch(es) [1]"), msg)
      assert(msg.contains(s"no trainer of rank 0 reconnected to $socket within 3 s"), msg)
      assert(!msg.contains("close the DeviceBatch"), msg)
    }
  }

  test("a trainer that holds a batch past the trainer timeout fails its rank naming the rank, its pid and the batch") {
    TestFiles.withTempDir("serve-held") { dir =>
      val in = tars(dir.resolve("in"), Seq(40))
      val socket = socketIn(dir)
      val job = serve(in, socket, 1, 3)
      val t = new Trainer(socket, 0, 1, dir, Seq("--hang-after", "2")) // holds batch 1, alive
      try {
        val e = intercept[Exception](Await.result(job, 3.minutes))
        val msg = causes(e)
        assert(msg.contains(s"Trainer of rank 0 (pid ${t.process.pid}, connection "), msg)
        assert(msg.contains(") held batch 1 of epoch 0 for longer than the trainer timeout of 3 s"
          + " (spark.spindle.feed.trainerTimeoutSeconds, --trainer-timeout) without releasing it"), msg)
        Seq("DeviceBatch", "try-with-resources", "spindle-bridge-conn", "Lease on batch")
          .foreach(s => assert(!msg.contains(s), s"'$s' in: $msg"))
        assert(t.process.isAlive, "the trainer was alive, holding the batch")
      } finally t.process.destroyForcibly().waitFor()
      assert(t.batches().map(_.batch) == Seq(0L, 1L))
    }
  }

  test("serving flags and settings are checked before any work") {
    def usage(a: String*): String =
      intercept[picocli.CommandLine.ParameterException](FeedCommand.run(spark, a.toArray)).getMessage
    val base = Seq("--input", "/nonexistent", "--world-size", "2")
    assert(usage(base :+ "--device" :+ "host": _*) == "--device needs --serve (it configures the trainer bridge)")
    assert(usage(base :+ "--socket" :+ "/tmp/x.sock": _*).startsWith("--socket needs --serve"))
    assert(usage(base ++ Seq("--serve", "--partitions", "4"): _*).startsWith("--partitions does not apply with --serve"))
    assert(usage(base ++ Seq("--serve", "--device", "gpu"): _*) ==
      "Invalid value for --device: 'gpu' (must be auto, cuda or host)")
    assert(usage(base ++ Seq("--serve", "--socket", "run/bridge.sock"): _*) ==
      "Invalid value for --socket: 'run/bridge.sock' (must be an absolute path)")
    assert(usage(base ++ Seq("--serve", "--trainer-timeout", "0"): _*) ==
      "Invalid value for --trainer-timeout: '0' (must be an integer > 0)")
    assert(usage(base ++ Seq("--serve", "--conf", "spark.spindle.feed.slots=1"): _*) ==
      "Invalid value for spark.spindle.feed.slots: '1' (must be an integer >= 2)")
    TestFiles.withTempDir("serve-slots") { dir =>
      val in = tars(dir.resolve("in"), Seq(30))
      val e = intercept[IllegalArgumentException](FeedCommand.run(spark,
        args(in, dir.resolve("b.sock"), 3, 5)))
      assert(e.getMessage.contains("world size 3 needs 3 task slots, but master local[2] has 2"), e.getMessage)
    }
  }
}

object FeedServeSuite {
  val Python: String = sys.env.getOrElse("SPINDLE_PYTHON", "/usr/bin/python3")
  val Script: Path = Paths.get("..", "loader-gpu", "python", "tests", "trainer_check.py").toAbsolutePath.normalize

  /** The run token the bridge on `socket` wrote beside it, as a user starting trainers reads it. */
  def runToken(socket: Path): String =
    Files.readString(socket.resolveSibling(socket.getFileName.toString + ".token")).trim

  def sha256(b: Array[Byte]): String = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b))

  def pixels(t: dev.spindle.spark.image.ImageTransform, png: Array[Byte], index: Long): Array[Byte] = {
    val alloc = new RootAllocator()
    try {
      val buf = alloc.buffer(t.outputBytes())
      try {
        t.apply(png, 0, png.length, index, buf, 0)
        val out = new Array[Byte](t.outputBytes().toInt)
        buf.getBytes(0, out)
        out
      } finally buf.close()
    } finally alloc.close()
  }

  /** A trainer process (numpy views) whose --out file records every batch it saw. */
  final class Trainer(socket: Path, rank: Int, world: Int, dir: Path, extra: Seq[String]) {
    val out: Path = Files.createTempFile(dir, s"rank$rank-", ".tsv")
    private val log = Files.createTempFile(dir, s"rank$rank-", ".log")
    val process: Process = {
      val pb = new ProcessBuilder((Seq(Python, Script.toString, "--socket", socket.toString,
        "--rank", rank.toString, "--world", world.toString, "--out", out.toString, "--numpy") ++ extra).asJava)
        .redirectErrorStream(true).redirectOutput(log.toFile)
      pb.environment().put("PYTHONDONTWRITEBYTECODE", "1")
      pb.environment().put("SPINDLE_RUN_TOKEN", runToken(socket))
      pb.start()
    }

    def await(): Int = {
      if (!process.waitFor(180, TimeUnit.SECONDS)) {
        process.destroyForcibly()
        throw new AssertionError(s"trainer of rank $rank did not finish: $output")
      }
      process.exitValue()
    }

    def output: String = Files.readString(log)

    def lines(): Seq[Line] =
      Files.readAllLines(out, StandardCharsets.UTF_8).asScala.toSeq.map(l => Line(l.split("\t", -1).toIndexedSeq))

    def batches(): Seq[Line] = lines().filter(_.kind == "B")
  }

  final case class Line(fields: IndexedSeq[String]) {
    def kind: String = fields(0)
    def batch: Long = fields(1).toLong
    def sha256: String = fields(2)
    def labels: Seq[Long] = fields(4).split(',').toSeq.map(_.toLong)
    def indices: Seq[Long] = fields(5).split(',').toSeq.map(_.toLong)
    def keys: Seq[String] = fields(6).split('|').toSeq
    def shape: String = fields(7)
    def weights: Seq[Double] = fields(10).split(',').toSeq.map(_.toDouble)
  }
}
