package dev.spindle.spark.train
import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.example.{ExampleCommand, FashionMnistImport}
import dev.spindle.spark.testkit.LocalClusterFixture
import org.scalatest.funsuite.AnyFunSuite
import dev.spindle.spark.feed.FeedData

/**
 * `train` on two executor JVMs (local-cluster[2,1,1024]): one rank per executor, each trainer a
 * child of its executor, fed every sample of every epoch once, after one of them was killed; and
 * `example fashion-mnist`, a user of `train`, learning there.
 */
class TrainClusterSuite extends AnyFunSuite with LocalClusterFixture {
  import FeedData._
  import TrainRuns._

  override protected def appName: String = "train-cluster"

  test("two ranks on two executors, one SIGKILLed mid-epoch: resumed from their checkpoints, every sample once") {
    assume(torchAvailable, s"$Python cannot import torch")
    val in = tars(dir.resolve("in"), Seq(11, 17, 9)) // 37 samples
    val out = Files.createDirectories(dir.resolve("out"))
    val script = Paths.get(getClass.getResource("/train/checkpoint_trainer.py").toURI)
    val r = TrainCommand.run(spark, Array("--input", in.toString, "--size", "8", "--world-size", "2",
      "--batch-size", "3", "--seed", "9", "--remainder", "PAD", "--epochs", "2", "--python", Python,
      "--state-dir",
      dir.resolve("states").toUri.toString, "--", script.toString, out.toString,
      "--checkpoints", out.resolve("ckpt").toString, "--every", "2", "--kill-rank", "0",
      "--kill-step", "4"))
    assert(Files.exists(out.resolve("killed")))
    val json = new com.fasterxml.jackson.databind.ObjectMapper()
    val real = (0 until 2).flatMap { rank =>
      json.readTree(out.resolve(s"final-rank-$rank.json").toFile).get("lineage").elements().asScala
        .flatMap(s => s.get(1).elements().asScala.map(i => (s.get(0).asInt, i.asLong)))
    }
    val expected = for (e <- 0 until 2; i <- 0L until 37) yield (e, i)
    assert(real.sorted == expected.sorted)
    val trainersReport = r.fields().get("trainers").asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
    assert(trainersReport.map(_.get("executor")).toSet.size == 2, "one rank per executor JVM")
    assert(trainersReport.map(_.get("exit_code")) == Seq(0, 0))
    assert(r.fields().get("restarts").asInstanceOf[java.util.List[_]].size == 1)
    val second = r.fields().get("attempt_starts").asInstanceOf[java.util.List[java.util.Map[String, Object]]].get(1)
    assert(second.get("from") == "checkpoint" && second.get("step") == 2L, second)
    assert(trainersReport.forall(_.get("steps") == 2L * 7 - 2), "equal batch counts: 2 epochs of 7")
  }

  test("example fashion-mnist trains on local-cluster: one rank per executor, far above chance") {
    assume(torchAvailable, s"$Python cannot import torch")
    assume(Files.isReadable(FashionMnistImport.DEBIAN_DIR.resolve("train-images-idx3-ubyte.gz")),
      s"Debian's dataset-fashion-mnist is not installed (${FashionMnistImport.DEBIAN_DIR})")
    val work = dir.resolve("fmnist")
    val r = ExampleCommand.run(spark, ExampleCommand.options(2, 2560, 2, 64, 1000, work,
      FashionMnistImport.DEBIAN_DIR, Python))
    val accuracy = r.get("test_accuracy").asInstanceOf[Double]
    assert(accuracy > 0.4, s"accuracy $accuracy (chance is 0.1)")
    assert(r.get("train_samples") == 2L * 20 * 2 * 64) // 2 epochs of 20 batches per rank
    val trainers = r.get("train").asInstanceOf[java.util.Map[String, Object]].get("trainers")
      .asInstanceOf[java.util.List[java.util.Map[String, Object]]].asScala
    assert(trainers.map(_.get("executor")).toSet.size == 2, "one rank per executor JVM")
  }
}
