package dev.spindle.spark.train

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.testkit.{SparkFixture, TestFiles, TextCorpus}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The token-budget example: a pre-tokenised Parquet corpus fed by `train --batch-tokens` to two
 * DDP trainers of a tiny next-token model. Every batch holds at most the budget's tokens and the
 * batch size's rows, ranks get equal batch counts, every sample's tokens reach a trainer once an
 * epoch, and the loss decreases.
 */
class TrainBudgetSuite extends AnyFunSuite with SparkFixture {
  import TrainRuns._

  override protected def master: String = "local[4]"

  private val MaxRows = 6
  private val Budget = 24

  test("train --batch-tokens packs token batches: within the budget, equal per rank, every sample once") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-budget") { dir =>
      val n = 60
      val in = TextCorpus.writeParquet(dir.resolve("in"), n, files = 3)
      val out = Files.createDirectories(dir.resolve("out"))
      val script = Paths.get(getClass.getResource("/train/budget_trainer.py").toURI)
      val report = TrainCommand.run(spark, Array("--input", in.toString,
        "--fields", "text=text:string,tokens=tokens:list<int32>",
        "--world-size", "2", "--batch-size", MaxRows.toString, "--batch-tokens", Budget.toString,
        "--epochs", "2", "--remainder", "PAD", "--python", Python, "--",
        script.toString, out.toString, TextCorpus.Vocabulary.size.toString, MaxRows.toString,
        Budget.toString))
      assert(report.get("batch_tokens") == Budget && report.get("batch_tokens_field") == "tokens")
      val json = new ObjectMapper()
      val batches: Seq[(Int, JsonNode)] = (0 until 2).flatMap(rank =>
        Files.readAllLines(out.resolve(s"budget-$rank.jsonl")).asScala.map(l => (rank, json.readTree(l))))
      // 20 rows a file: key text-00F.parquet#R is sentence 20 * F + R
      val number: String => Int = { case s"text-$f.parquet#$r" => 20 * f.toInt + r.toInt }
      for (epoch <- 0 until 2) {
        val mine = batches.filter(_._2.get("epoch").asInt() == epoch)
        val perRank = (0 until 2).map(r => mine.count(_._1 == r))
        assert(perRank.distinct.size == 1 && perRank.head > 0, s"epoch $epoch: equal batch counts $perRank")
        mine.foreach { case (_, b) =>
          assert(b.get("rows").asInt() <= MaxRows && b.get("tokens").asInt() <= Budget, b)
        }
        // Batches are packed, not cut at the batch size: most hold fewer rows than it.
        assert(mine.count(_._2.get("rows").asInt() < MaxRows) > mine.size / 2, mine)
        val keys = mine.flatMap(_._2.get("keys").elements().asScala.map(k => number(k.asText())))
        assert(keys.sorted == (0 until n), s"epoch $epoch: each sample exactly once")
        mine.foreach { case (_, b) =>
          b.get("keys").elements().asScala.zip(b.get("token_lists").elements().asScala).foreach {
            case (k, t) =>
              assert(t.elements().asScala.map(_.asInt()).toSeq ==
                TextCorpus.tokens(TextCorpus.sentence(number(k.asText()))), b)
          }
        }
      }
      // the report's per-epoch batches and tokens: every sample's tokens once an epoch
      val total = (0 until n).map(i => TextCorpus.tokens(TextCorpus.sentence(i)).size.toLong).sum
      val epochs = report.get("token_epochs").asInstanceOf[java.util.List[java.util.Map[String, AnyRef]]].asScala
      assert(epochs.map(_.get("epoch")) == Seq(0, 1))
      for (e <- epochs) {
        val epoch = e.get("epoch").asInstanceOf[Int]
        assert(e.get("tokens") == total, e)
        assert(e.get("batches") == batches.count(_._2.get("epoch").asInt() == epoch).toLong, e)
      }
      for (rank <- 0 until 2) {
        val losses = json.readTree(out.resolve(s"loss-$rank.json").toFile).elements().asScala.map(_.asDouble()).toSeq
        assert(losses.size >= 6, losses)
        assert(losses.takeRight(3).sum / 3 < losses.head * 0.8, s"rank $rank: the loss decreases: $losses")
      }
    }
  }
}
