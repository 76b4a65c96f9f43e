package dev.spindle.spark.train
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.plan.{Digest, EpochPlan, Remainder}
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.manifest.ManifestCache
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.feed.Preprocessed

/**
 * `train` in local mode: two DDP ranks (gloo) of `train/record_trainer.py` launched by the rank
 * tasks, fed every epoch (from tar shards or a preprocess output), killed when they hang, and gone
 * when the driver JVM is killed (restarts after a failure: TrainRestartSuite).
 */
class TrainSuite extends AnyFunSuite with SparkFixture {
  import FeedData._
  import TrainRuns._

  override protected def master: String = "local[4]"

  private val Samples = 45 // 13 + 7 + 25: with 2 ranks of 4 rows, PAD pads the last round

  private def dataset(dir: Path): Path = tars(dir.resolve("in"), Seq(13, 7, 25))

  private def train(in: Path, out: Path, flags: Seq[String], script: String*): FeedReport =
    TrainCommand.run(spark, (Seq("--input", in.toString, "--size", "8", "--world-size", "2",
      "--batch-size", "4", "--seed", "5", "--remainder", "PAD", "--python", Python)
      ++ flags ++ Seq("--", Script.toString, out.toString) ++ script).toArray)

  /** Every sample of every epoch exactly once among the real rows the ranks completed. */
  private def assertExactlyOnce(out: Path, epochs: Int): Unit = {
    val real = realRows(out, 2)
    val expected = for (e <- 0 until epochs; i <- 0L until Samples) yield (e, i)
    assert(real.sorted == expected.sorted, s"real rows: ${real.groupBy(identity).filter(_._2.size > 1).keys}")
  }

  /** Each leg the report lists has the digest of the plan's batches it served, from its first. */
  private def assertLegDigests(r: FeedReport, in: Path): Unit = {
    val m = manifest(in)
    val legs = ranks(r)
    assert(legs.map(l => (l("epoch"), l("rank"))).toSet == Set((0, 0), (0, 1), (1, 0), (1, 1)))
    for (l <- legs) {
      val plan = EpochPlan.create(m, spec(5, l("epoch").asInstanceOf[Int], 2, 4, Remainder.PAD))
      val first = l("first_batch").asInstanceOf[Int]
      assert(l("batches") == 6 - first, l)
      assert(l("digest") == Digest.of(plan.rank(l("rank").asInstanceOf[Int]).indices(first, 6)), l)
    }
  }

  test("two ranks train for two epochs: torchrun's environment, every sample once, padding weighted 0") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-local") { dir =>
      val out = Files.createDirectories(dir.resolve("out"))
      val in = dataset(dir)
      val r = train(in, out, Seq("--epochs", "2"))
      assertExactlyOnce(out, 2)
      assertLegDigests(r, in)
      assert(ranks(r).forall(_("first_batch") == 0))
      val byRank = (0 until 2).map(rank => steps(out, rank))
      assert(byRank.map(_.size).distinct.size == 1 && byRank.head.size == 2 * 6, "equal batch counts")
      assert(byRank.flatten.forall(_.len == 6), "len(loader): the rank's batches in the epoch")
      val padded = byRank.flatten.flatMap(s => s.weights.filter(_ == 0.0))
      assert(padded.size == 2 * (48 - Samples), "PAD's rows carry weight 0")
      val envs = trainers(out).sortBy(_.get("env").get("RANK").asText)
      assert(envs.size == 2)
      envs.zipWithIndex.foreach { case (t, rank) =>
        val env = t.get("env")
        assert(env.get("RANK").asText == rank.toString && env.get("WORLD_SIZE").asText == "2")
        assert(env.get("LOCAL_RANK").asText == rank.toString && env.get("LOCAL_WORLD_SIZE").asText == "2")
        assert(env.get("MASTER_ADDR").asText.nonEmpty && env.get("MASTER_PORT").asText.toInt > 0)
        assert(env.get("SPINDLE_DEVICE").asText == "cpu" && env.get("SPINDLE_EPOCHS").asText == "2")
        assert(t.get("backend").asText == "gloo" && t.get("world").asInt == 2)
        assert(t.get("pgid").asLong == t.get("pid").asLong, "the launcher leads its process group")
      }
      val trainersReport = r.fields().get("trainers").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(trainersReport.map(_.get("exit_code")) == Seq(0, 0))
      assert(trainersReport.forall(_.get("end") == "ok"))
      assert(r.fields().get("restarts").asInstanceOf[java.util.List[_]].isEmpty)
      assert(r.fields().get("samples") == 2L * Samples)
      val timeline = r.fields().get("timeline").asInstanceOf[java.util.List[java.util.Map[String, Object]]]
      assert(timeline.get(timeline.size - 1).get("samples").asInstanceOf[Long] >= 2L * Samples, timeline)
      envs.foreach(t => assert(!alive(t.get("pid").asLong)))
    }
  }

  test("a trainer that resumes elsewhere than train read ahead from is served from where it says") {
    assume(torchAvailable, s"$Python cannot import torch")
    // 12 batches a leg, more than the ring holds; then 3, a leg read whole before the HELLO
    for ((batch, at) <- Seq((4, 3), (16, 1))) TestFiles.withTempDir("train-redirect") { dir =>
      val in = dataset(dir)
      def alone(out: Path, script: String*): FeedReport =
        TrainCommand.run(spark, (Seq("--input", in.toString, "--size", "8", "--world-size", "1",
          "--batch-size", batch.toString, "--seed", "5", "--remainder", "PAD", "--python", Python,
          "--epochs", "2", "--", Script.toString, out.toString) ++ script).toArray)
      val plain = Files.createDirectories(dir.resolve("plain"))
      alone(plain)
      val out = Files.createDirectories(dir.resolve("out"))
      val r = alone(out, "--resume-at", at.toString)
      val all = steps(plain, 0).map(s => (s.epoch, s.batch) -> s.indices).toMap
      val got = steps(out, 0)
      val expected = all.keys.toSeq.filter { case (e, b) => e > 0 || b >= at }.sorted
      assert(got.map(s => (s.epoch, s.batch)) == expected, s"epoch 0 from batch $at, epoch 1 whole")
      got.foreach(s => assert(s.indices == all((s.epoch, s.batch)), s"the plan's rows for $s"))
      assert(ranks(r).sortBy(_("epoch").asInstanceOf[Int]).map(_("first_batch")) == Seq(at, 0),
        "the legs as served")
    }
  }

  test("two ranks train from a preprocess output: every stored row once per epoch, read as stored") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-prep") { dir =>
      val prep = Preprocessed.write(spark, dataset(dir), dir.resolve("prep"), "parquet")
      val out = Files.createDirectories(dir.resolve("out"))
      val r = train(prep, out, Seq("--epochs", "2"))
      assertExactlyOnce(out, 2) // the output's rows, numbered over its part files: 0 until 45
      val manifest = r.fields().get("manifest").asInstanceOf[java.util.Map[String, Object]]
      assert(manifest.get("status") == ManifestCache.PREPROCESSED && manifest.get("samples") == Samples.toLong)
      val byRank = (0 until 2).map(rank => steps(out, rank))
      assert(byRank.map(_.size) == Seq(12, 12), "equal batch counts")
      assert(r.fields().get("trainers").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
        .map(_.get("exit_code")) == Seq(0, 0))
    }
  }

  test("the report counts host copies per sample: 0 from tar shards decoded into the ring, 2 from a preprocess output") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-copies") { dir =>
      val in = dataset(dir)
      val prep = Preprocessed.write(spark, in, dir.resolve("prep"), "arrow")
      for ((input, copies) <- Seq(in -> 0.0, prep -> 2.0)) {
        val out = Files.createDirectories(dir.resolve("out-" + input.getFileName))
        // DROP_LAST: 40 rows, no padding, so every delivered row is a sample read once
        val r = TrainCommand.run(spark, Array("--input", input.toString, "--size", "8",
          "--world-size", "2", "--batch-size", "4", "--seed", "5", "--remainder", "DROP_LAST",
          "--python", Python, "--", Script.toString, out.toString))
        assert(r.get("images") == 40L, input)
        assert(r.get("host_copies_per_sample") == copies, input)
        assert(r.hostCopiesPerSample().getAsDouble == copies, input)
      }
    }
  }

  test("the train guide's five-line script (examples/minimal_train.py) trains on two ranks as it stands") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-minimal") { dir =>
      val script = PythonClient.dir().resolve("examples/minimal_train.py")
      val guide = Files.readString(PythonClient.dir().resolve("../../docs/guide/train.md"))
      assert(guide.contains(Files.readString(script).trim), "docs/guide/train.md shows the script as it is")
      val r = TrainCommand.run(spark, Array("--input", dataset(dir).toString, "--size", "8",
        "--world-size", "2", "--batch-size", "4", "--epochs", "2", "--python", Python, "--",
        script.toString))
      val t = r.fields().get("trainers").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(t.map(_.get("exit_code")) == Seq(0, 0))
      assert(r.ranks().asScala.map(_.epoch).toSet == Set(0, 1))
    }
  }

  test("the train guide's checkpointing script (examples/checkpoint_train.py) trains on two ranks as it stands") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-readme-checkpoint") { dir =>
      val script = PythonClient.dir().resolve("examples/checkpoint_train.py")
      val guide = Files.readString(PythonClient.dir().resolve("../../docs/guide/train.md"))
      assert(guide.contains(Files.readString(script).trim), "docs/guide/train.md shows the script as it is")
      val ckpt = dir.resolve("ckpt")
      val r = TrainCommand.run(spark, Array("--input", dataset(dir).toString, "--size", "8",
        "--world-size", "2", "--batch-size", "4", "--epochs", "2", "--python", Python, "--",
        script.toString, ckpt.toString))
      val t = r.fields().get("trainers").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
      assert(t.map(_.get("exit_code")) == Seq(0, 0))
      assert(Files.isRegularFile(ckpt.resolve("rank-0.pt")) && Files.isRegularFile(ckpt.resolve("rank-1.pt")),
        "each rank saved its checkpoint")
    }
  }

  test("a trainer that hangs is killed with its process group after the trainer timeout; one error names it") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-hang") { dir =>
      val out = Files.createDirectories(dir.resolve("out"))
      val e = intercept[TrainJob.TrainFailure] {
        train(dataset(dir), out, Seq("--trainer-timeout", "6"), "--hang-rank", "1", "--hang-step", "2")
      }
      assert(e.getMessage.contains("Rank 1 (trainer pid"), e.getMessage)
      assert(e.getMessage.contains("hung"), e.getMessage)
      assert(e.getMessage.contains("Last lines of its output"), e.getMessage)
      trainers(out).foreach(t => assert(!alive(t.get("pid").asLong), s"trainer ${t.get("pid")} survived"))
    }
  }

  test("the driver JVM killed (SIGKILL): no trainer process survives it") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-driver-killed") { dir =>
      val in = dataset(dir)
      val out = Files.createDirectories(dir.resolve("out"))
      val javaExe = Path.of(System.getProperty("java.home"), "bin", "java").toString
      val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
      val jvmFlags = _root_.java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments
        .asScala.filter(a => a.startsWith("--add") || a.startsWith("-XX:+Ignore"))
      val pb = new ProcessBuilder((Seq(javaExe, "-cp", cp) ++ jvmFlags ++ Seq(
        "dev.spindle.spark.cli.SpindleMain", "train", "--master", "local[4]", "--input", in.toString,
        "--size", "8", "--world-size", "2", "--batch-size", "4", "--python", Python,
        "--",
        Script.toString, out.toString, "--hang-rank", "0", "--hang-step", "1")).asJava)
        .redirectErrorStream(true).redirectOutput(dir.resolve("driver.log").toFile)
      val driver = pb.start()
      try {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120)
        while (trainers(out).size < 2 && System.nanoTime() < deadline && driver.isAlive) Thread.sleep(200)
        assert(trainers(out).size == 2, Files.readString(dir.resolve("driver.log")))
        Thread.sleep(500)
        driver.destroyForcibly().waitFor()
        val pids = trainers(out).map(_.get("pid").asLong)
        val gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (pids.exists(alive) && System.nanoTime() < gone) Thread.sleep(100)
        assert(!pids.exists(alive), s"trainers still running: ${pids.filter(alive)}")
      } finally {
        driver.destroyForcibly()
        trainers(out).map(_.get("pid").asLong).foreach(p => ProcessHandle.of(p).ifPresent(_.destroyForcibly()))
      }
    }
  }
}
