package dev.spindle.spark.train

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.testkit.{SparkFixture, TestFiles, TextCorpus}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `train --fields` without an image: the pre-tokenised text corpus fed to two DDP trainers that
 * train a tiny next-token model. Batches have no images (`batch.images` is None) and labels -100;
 * every sample's text and tokens reach a trainer once an epoch, and the model's loss decreases.
 */
class TrainTextSuite extends AnyFunSuite with SparkFixture {
  import TrainRuns._

  override protected def master: String = "local[4]"

  private def train(in: Path, out: Path, fields: String, epochs: Int): Seq[com.fasterxml.jackson.databind.JsonNode] = {
    val script = Paths.get(getClass.getResource("/train/text_trainer.py").toURI)
    TrainCommand.run(spark, Array("--input", in.toString, "--fields", fields,
      "--world-size", "2", "--batch-size", "4", "--epochs", epochs.toString, "--remainder", "PAD",
      "--python", Python, "--", script.toString, out.toString, TextCorpus.Vocabulary.size.toString))
    val json = new ObjectMapper()
    (0 until 2).flatMap(rank => Files.readAllLines(out.resolve(s"text-$rank.jsonl")).asScala.map(json.readTree))
  }

  /** `number` gives a key's sentence number: keys are `doc-NNNNNN` in tars, `FILE#ROW` in Parquet. */
  private def check(rows: Seq[com.fasterxml.jackson.databind.JsonNode], n: Int, epochs: Int, out: Path,
      number: String => Int): Unit = {
    for (epoch <- 0 until epochs) {
      val seen = rows.filter(_.get("epoch").asInt() == epoch).map(r => number(r.get("key").asText())).sorted
      assert(seen == (0 until n), s"epoch $epoch: each sample exactly once")
    }
    rows.foreach { r =>
      val i = number(r.get("key").asText())
      assert(r.get("text").asText() == TextCorpus.sentence(i), r)
      assert(r.get("tokens").elements().asScala.map(_.asInt()).toSeq == TextCorpus.tokens(TextCorpus.sentence(i)), r)
    }
    val json = new ObjectMapper()
    for (rank <- 0 until 2) {
      val losses = json.readTree(out.resolve(s"loss-$rank.json").toFile).elements().asScala.map(_.asDouble()).toSeq
      assert(losses.size >= 6, losses)
      assert(losses.takeRight(3).sum / 3 < losses.head * 0.8, s"rank $rank: the loss decreases: $losses")
    }
  }

  test("pre-tokenised Parquet text trains a tiny next-token model: no images, every sample's tokens once an epoch") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-text") { dir =>
      val in = TextCorpus.writeParquet(dir.resolve("in"), 22, files = 2)
      val out = Files.createDirectories(dir.resolve("out"))
      // 22 rows in two files of 11: key text-00F.parquet#R is sentence 11 * F + R
      val number: String => Int = { case s"text-$f.parquet#$r" => 11 * f.toInt + r.toInt }
      check(train(in, out, "text=text:string,tokens=tokens:list<int32>", epochs = 2), 22, 2, out, number)
    }
  }

  test("tars of .txt and .tok members train the same way, without any image member") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-text-tars") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 3, perShard = 6)
      val out = Files.createDirectories(dir.resolve("out"))
      check(train(in, out, "text=txt,tokens=tok:list<int32>", epochs = 1), 18, 1, out, TextCorpus.number)
    }
  }
}
