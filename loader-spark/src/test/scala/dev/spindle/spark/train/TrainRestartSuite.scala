package dev.spindle.spark.train
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import dev.spindle.FeedReport
import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.scalatest.funsuite.AnyFunSuite
import picocli.CommandLine.ParameterException
import dev.spindle.spark.feed.FeedData

/**
 * `train` after a trainer fails (local mode, two DDP ranks): a script that checkpoints with
 * `spindle_bridge.checkpoint` (`train/checkpoint_trainer.py`) resumes the model with the data, so
 * its final model is an uninterrupted run's bit for bit; one that does not restarts from the run's
 * start, loudly; a trainer that fails before it connects is not restarted; a `--python` that cannot
 * import torch is refused before Spark runs anything; the console shows each trainer line once and
 * no Java stack.
 */
class TrainRestartSuite extends AnyFunSuite with SparkFixture {
  import FeedData._
  import TrainRuns._

  override protected def master: String = "local[4]"

  private val Json = new ObjectMapper()
  private val Samples = 45 // 13 + 7 + 25: 2 ranks of 4 rows, PAD: 6 batches a rank, 48 rows an epoch
  private val Rows = 2 * 2 * 6 * 4 // two epochs

  private val CheckpointScript: Path =
    Path.of(getClass.getResource("/train/checkpoint_trainer.py").toURI)

  private def dataset(dir: Path): Path = tars(dir.resolve("in"), Seq(13, 7, 25))

  private def args(in: Path, flags: Seq[String], script: Path, scriptArgs: Seq[String],
      epochs: Int = 2): Array[String] =
    (Seq("--input", in.toString, "--size", "8", "--world-size", "2", "--batch-size", "4", "--seed",
      "5", "--remainder", "PAD", "--epochs", epochs.toString, "--python", Python) ++ flags ++
      Seq("--", script.toString) ++ scriptArgs).toArray

  /** A checkpointing run into `dir/name`: its report, and its trainers' final files. */
  private def checkpointed(in: Path, dir: Path, name: String, fault: String*): (FeedReport, Path) = {
    val out = Files.createDirectories(dir.resolve(name))
    val r = TrainCommand.run(spark, args(in, Seq.empty, CheckpointScript,
      Seq(out.toString, "--checkpoints", out.resolve("ckpt").toString) ++ fault))
    (r, out)
  }

  private def finals(out: Path): Seq[JsonNode] =
    (0 until 2).map(r => Json.readTree(out.resolve(s"final-rank-$r.json").toFile))

  /** Per trainer process of rank `rank`, in start order: what checkpoint.load gave it. */
  private def starts(out: Path, rank: Int): Seq[JsonNode] =
    Files.list(out).iterator().asScala.filter(_.getFileName.toString.startsWith(s"start-$rank-"))
      .toSeq.sortBy(f => Files.getLastModifiedTime(f).toMillis).map(f => Json.readTree(f.toFile))

  /** Every sample once per epoch among the real rows of the final model's steps, over both ranks. */
  private def assertLineageOnce(fin: Seq[JsonNode]): Unit = {
    val rows = fin.flatMap(_.get("lineage").elements().asScala.flatMap { step =>
      val epoch = step.get(0).asInt
      step.get(1).elements().asScala.map(i => (epoch, i.asLong))
    })
    val expected = for (e <- 0 until 2; i <- 0L until Samples) yield (e, i)
    assert(rows.sorted == expected.sorted, s"twice: ${rows.groupBy(identity).filter(_._2.size > 1).keys}")
  }

  private def list(r: FeedReport, key: String): Seq[java.util.Map[String, Object]] =
    r.fields().get(key).asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala.toSeq

  private var reference: Seq[JsonNode] = _

  /** The uninterrupted run every killed one is compared with (same data, seed and script). */
  private def uninterrupted(dir: Path, in: Path): Seq[JsonNode] = {
    if (reference == null) {
      val (r, out) = checkpointed(in, dir, "reference")
      assert(list(r, "restarts").isEmpty)
      assert(r.fields().get("images") == Rows && r.fields().get("images_delivered") == Rows)
      reference = finals(out)
      assertLineageOnce(reference)
    }
    reference
  }

  test("a trainer SIGKILLed mid-epoch after a checkpoint: every rank resumes from it, the final model is an uninterrupted run's") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-ckpt-kill") { dir =>
      val in = dataset(dir)
      val expected = uninterrupted(dir, in)
      // checkpoints at steps 3, 6, ...; rank 1 dies on receiving its 5th batch: steps 4 and 5 lost
      val (r, out) = checkpointed(in, dir, "killed", "--every", "3", "--kill-rank", "1",
        "--kill-step", "5", "--kill-at", "batch")
      assert(Files.exists(out.resolve("killed")))
      val fin = finals(out)
      for (rank <- 0 until 2) {
        assert(fin(rank).get("model").asText == expected(rank).get("model").asText, s"rank $rank's model")
        assert(fin(rank).get("steps").asInt == 12)
        assert(starts(out, rank).map(_.get("extra_step").asText) == Seq("null", "3"))
        assert(starts(out, rank).last.get("checkpoint").asText == out.resolve(s"ckpt/rank-$rank.pt").toString)
      }
      assertLineageOnce(fin)
      assert(fin.map(_.get("lineage")) == expected.map(_.get("lineage")))
      assert(list(r, "restarts").size == 1)
      val second = list(r, "attempt_starts")(1)
      assert(second.get("from") == "checkpoint" && second.get("step") == 3L && second.get("batch") == 3, second)
      // the final model's lineage is the whole run; steps 4 of both ranks were delivered twice
      assert(r.fields().get("images") == Rows && r.fields().get("samples") == 2L * Samples)
      assert(r.fields().get("images_delivered") == Rows + 2 * 4)
      assert(r.fields().get("images_last_attempt") == Rows - 2 * 3 * 4)
      val t = list(r, "trainers")
      // rank 0's trainer may fail too, on its lost peer (gloo): a failure of its own
      assert(t.map(_.get("restarts")) == Seq(1, 1) && t(1).get("failures") == 1, t)
      assert(t.forall(x => x.get("steps") == 12L - 3 && x.get("step_s").asInstanceOf[Double] > 0), t)
    }
  }

  test("a rank killed before it saves the checkpoint its peer saved: both resume from the one before (.prev)") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-ckpt-prev") { dir =>
      val in = dataset(dir)
      val expected = uninterrupted(dir, in)
      // checkpoints at steps 2, 4, ...: rank 1 dies after step 4 instead of saving it; rank 0 saves
      // step 4 and blocks in step 5: the latest step both have is 2, rank 0's previous checkpoint
      val (r, out) = checkpointed(in, dir, "killed", "--every", "2", "--kill-rank", "1",
        "--kill-step", "4", "--kill-at", "save")
      val fin = finals(out)
      for (rank <- 0 until 2) {
        assert(fin(rank).get("model").asText == expected(rank).get("model").asText, s"rank $rank's model")
      }
      assertLineageOnce(fin)
      assert(starts(out, 0).last.get("checkpoint").asText == out.resolve("ckpt/rank-0.pt.prev").toString)
      assert(starts(out, 1).last.get("checkpoint").asText == out.resolve("ckpt/rank-1.pt").toString)
      assert(starts(out, 0).last.get("extra_step").asInt == 2 && starts(out, 1).last.get("extra_step").asInt == 2)
      assert(list(r, "attempt_starts")(1).get("step") == 2L)
      assert(r.fields().get("images_delivered") == Rows + (2 + 1) * 4) // rank 0 took 3 and 4, rank 1 took 3
    }
  }

  test("a script without checkpoints: after a SIGKILL every rank restarts from the run's start, with a warning") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-kill") { dir =>
      val out = Files.createDirectories(dir.resolve("out"))
      val in = dataset(dir)
      val r = TrainCommand.run(spark, args(in, Seq.empty, Script,
        Seq(out.toString, "--kill-rank", "1", "--kill-step", "4")))
      assert(Files.exists(out.resolve("killed")))
      val second = list(r, "attempt_starts")(1)
      assert(second.get("from") == "start" && second.get("step") == 0L, second)
      assert(second.get("why").toString.contains("no rank saved a checkpoint"), second)
      // what the last trainer of each rank trained on: every sample once per epoch
      val lastPid = (0 until 2).map(rank => steps(out, rank).map(_.pid).last)
      val lineage = (0 until 2).flatMap(rank => steps(out, rank).filter(_.pid == lastPid(rank)))
      val real = lineage.flatMap(s => s.indices.zip(s.weights).collect { case (i, w) if w == 1.0 => (s.epoch, i) })
      assert(real.sorted == (for (e <- 0 until 2; i <- 0L until Samples) yield (e, i)).sorted)
      assert(ranks(r).forall(_("first_batch") == 0), "the restarted legs start at the epoch's start")
      val killed = r.fields().get("restarts")
        .asInstanceOf[java.util.List[java.util.List[java.util.Map[String, Object]]]].get(0).asScala
        .find(_.get("rank") == 1).get
      assert(killed.get("exit_code") == 137 && killed.get("end") == "exit", killed)
      assert(r.fields().get("images") == Rows && r.fields().get("images_delivered") == Rows + 2 * 3 * 4)
      trainers(out).foreach(t => assert(!alive(t.get("pid").asLong)))
    }
  }

  test("a trainer that fails before it connects is not restarted: one error with its last lines and the state directory") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-import-error") { dir =>
      val out = Files.createDirectories(dir.resolve("out"))
      val script = Files.writeString(dir.resolve("broken.py"),
        "import os, sys\nopen(os.path.join(sys.argv[1], 'started-%s-%d' % (os.environ['RANK'], os.getpid())), 'w').close()\n" +
          "import spindle_no_such_module\n")
      val e = intercept[TrainJob.TrainFailure] {
        TrainCommand.run(spark, args(dataset(dir), Seq("--max-restarts", "2"), script, Seq(out.toString)))
      }
      val m = e.getMessage
      assert(m.contains("ModuleNotFoundError: No module named 'spindle_no_such_module'"), m)
      assert(m.contains("before it connected to its feeder") && m.contains("not restarted"), m)
      assert(!m.contains("restart(s)"), m)
      val stateDir = "(file:[^ ]*spindle-train-[0-9]+/?)".r.findFirstIn(m)
      assert(stateDir.isDefined && m.contains("kept in " + stateDir.get), m)
      assert(Files.isDirectory(Path.of(java.net.URI.create(stateDir.get))), "a failed run keeps its states")
      val started = Files.list(out).iterator().asScala.map(_.getFileName.toString)
        .filter(_.startsWith("started-")).map(_.split("-")(1)).toSeq
      // the first rank to fail stops the other, maybe before its script ran: at most once a rank
      assert(started.nonEmpty && started.distinct.size == started.size, s"not restarted: $started")
    }
  }

  test("a --python that cannot import torch is refused before Spark runs anything") {
    TestFiles.withTempDir("train-python") { dir =>
      val jobs = new AtomicInteger()
      val listener = new SparkListener {
        override def onJobStart(e: SparkListenerJobStart): Unit = jobs.incrementAndGet()
      }
      spark.sparkContext.addSparkListener(listener)
      try {
        val a = args(dataset(dir), Seq.empty, Script, Seq(dir.toString))
        val e = intercept[ParameterException] {
          TrainCommand.run(spark, a.updated(a.indexOf(Python), "/bin/false"))
        }
        assert(e.getMessage.contains("'/bin/false' cannot import torch") && e.getMessage.contains("--python"),
          e.getMessage)
        Thread.sleep(1000) // a job that ran posted its start long before
        assert(jobs.get == 0, "no Spark job ran")
      } finally spark.sparkContext.removeSparkListener(listener)
    }
  }

  /** `bin/spindle train …` as a user runs it (the shipped log4j2 configuration): its output. */
  private def cli(dir: Path, argv: Seq[String]): (Int, Seq[String]) = {
    val javaExe = Path.of(System.getProperty("java.home"), "bin", "java").toString
    val cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
    val jvmFlags = _root_.java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments
      .asScala.filter(a => a.startsWith("--add") || a.startsWith("-XX:+Ignore"))
    val log4j = PythonClient.dir().resolve("../../conf/log4j2.properties").normalize()
    val log = dir.resolve("cli.log")
    val p = new ProcessBuilder((Seq(javaExe, "-cp", cp) ++ jvmFlags ++ Seq(
      s"-Dlog4j2.configurationFile=$log4j", "dev.spindle.spark.cli.SpindleMain", "train",
      "--master", "local[4]") ++ argv).asJava)
      .redirectErrorStream(true).redirectOutput(log.toFile).start()
    try assert(p.waitFor(300, TimeUnit.SECONDS), Files.readString(log))
    finally p.destroyForcibly()
    (p.exitValue(), Files.readAllLines(log).asScala.toSeq)
  }

  private def assertNoJavaStack(lines: Seq[String]): Unit = {
    val frames = lines.filter(_.matches("\\s+at [\\w$.]+\\(.*"))
    assert(frames.isEmpty, lines.mkString("\n"))
    assert(!lines.exists(_.contains("Exception in task")), lines.mkString("\n"))
  }

  test("the console shows each trainer line once, one line per restart and no Java stack") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-console") { dir =>
      val out = Files.createDirectories(dir.resolve("out"))
      val (code, lines) = cli(dir, args(dataset(dir), Seq("--max-restarts", "1"), Script,
        Seq(out.toString, "--kill-rank", "1", "--kill-step", "2"), epochs = 1).toSeq)
      val text = lines.mkString("\n")
      assert(code == 0, text)
      for (rank <- 0 until 2) {
        assert(lines.count(_.endsWith(s"[rank $rank] rank $rank done: 6 steps")) == 1, text)
      }
      val restart = lines.filter(_.contains("spindle train: rank 1 failed"))
      assert(restart.size == 1, text)
      assert(restart.head.contains("exited with status 137") && restart.head.contains("restart 1 of at most 1")
        && restart.head.contains("WARNING: every rank restarts from the run's start"), restart.head)
      assertNoJavaStack(lines)
    }
  }

  test("a failed run ends with the trainer's last lines, one error naming the state directory, and no Java stack") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-console-failed") { dir =>
      val script = Files.writeString(dir.resolve("broken.py"), "raise SystemExit('no data for this model')\n")
      val (code, lines) = cli(dir, args(dataset(dir), Seq("--no-ui"), script, Seq.empty).toSeq)
      val text = lines.mkString("\n")
      assert(code == 1, text)
      val failed = lines.indexWhere(_.startsWith("spindle train failed: Rank "))
      assert(failed >= 0 && lines.count(_.contains("failed: ")) == 1, text)
      assert(lines.drop(failed).exists(_.contains("no data for this model")), text)
      assert(lines.drop(failed).exists(_.contains("are kept in file:")), text)
      assertNoJavaStack(lines)
    }
  }
}
