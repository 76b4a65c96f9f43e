package dev.spindle.spark.train

import java.nio.file.{Files, Path}
import java.util.{List => JList, Map => JMap}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.plan.{EpochPlan, MixSpec, Mixture}
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/** `train --mix`: two DDP ranks trained on a 70/30 mixture of two tar data sets. */
class TrainMixSuite extends AnyFunSuite with SparkFixture {
  import FeedData._
  import TrainRuns._

  override protected def master: String = "local[4]"

  test("two ranks train on a 70/30 mixture: the planned samples reach the trainers, 70/30") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-mix") { dir =>
      val a = tars(dir.resolve("a"), Seq(40, 30, 50))
      val b = tars(dir.resolve("b"), Seq(25, 35))
      val out = Files.createDirectories(dir.resolve("out"))
      val r = TrainCommand.run(spark, Array("--mix", s"a=0.7:$a", "--mix", s"b=0.3:$b", "--size", "8",
        "--world-size", "2", "--batch-size", "5", "--python", Python, "--", Script.toString, out.toString))
      val (ma, mb) = (manifestOf(a.toString), manifestOf(b.toString))
      val m = new Manifest("mix", (ma.shards().asScala ++ mb.shards().asScala).asJava, JList.of())
      val mix = Mixture.of(MixSpec.parse(s"a=0.7:$a;b=0.3:$b", "total"), m.offsets(), Array(3, 2))
      val plan = EpochPlan.create(m, spec(0, 0, 2, 5), mix)
      val planned = plan.ranks().asScala.flatMap(p => p.indices(0, p.batches()).toSeq).toSeq
      assert(realRows(out, 2).map(_._2).sorted == planned.sorted)
      val sources = r.get("mix").asInstanceOf[JMap[String, AnyRef]].get("sources")
        .asInstanceOf[JList[JMap[String, AnyRef]]].asScala
      assert(sources.map(_.get("samples")) == Seq(126L, 54L))
      assert(math.abs(sources.head.get("realised").asInstanceOf[Double] - 0.7) < 0.01)
    }
  }
}
