package dev.spindle.spark.train

import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import dev.spindle.spark.cli.TrainCommand
import dev.spindle.spark.testkit.{CaptionData, SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `train --fields`: the image–caption example fed to two DDP trainers. Every caption, token list
 * and score reaches a trainer with its own image (the pixels the `spindle` data source gives the
 * same key), each sample once per epoch.
 */
class TrainFieldsSuite extends AnyFunSuite with SparkFixture {
  import TrainRuns._

  override protected def master: String = "local[4]"

  private val Fields = "image=jpg,label=cls,caption=txt,tokens=tok:list<int32>,score=score:float32"

  test("every caption, token list and score reaches a trainer with its own image, once an epoch") {
    assume(torchAvailable, s"$Python cannot import torch")
    TestFiles.withTempDir("train-fields") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 3, perShard = 7)
      val out = Files.createDirectories(dir.resolve("out"))
      val script = Paths.get(getClass.getResource("/train/fields_trainer.py").toURI)
      TrainCommand.run(spark, Array("--input", in.toString, "--fields", Fields, "--size", "16",
        "--world-size", "2", "--batch-size", "4", "--epochs", "2", "--remainder", "PAD",
        "--python", Python, "--", script.toString, out.toString))
      val json = new ObjectMapper()
      val rows = (0 until 2).flatMap { rank =>
        Files.readAllLines(out.resolve(s"fields-$rank.jsonl")).asScala.map(json.readTree)
      }
      // the pixels of each key as the data source decodes them at the same size
      val md5 = MessageDigest.getInstance("MD5")
      val pixels = spark.read.format("spindle").option("size", "16").load(in.toString).collect()
        .map(r => r.getAs[String]("key") -> md5.digest(r.getAs[Array[Byte]]("image")).map("%02x".format(_)).mkString)
        .toMap
      assert(pixels.size == 21)
      for (epoch <- 0 until 2) {
        val seen = rows.filter(_.get("epoch").asInt() == epoch)
        assert(seen.map(_.get("key").asText()).sorted == (0 until 21).map(CaptionData.key), s"epoch $epoch")
      }
      rows.foreach { r =>
        val key = r.get("key").asText()
        val i = CaptionData.number(key)
        assert(r.get("caption").asText() == CaptionData.caption(i), key)
        assert(r.get("tokens").elements().asScala.map(_.asInt()).toSeq == CaptionData.tokens(CaptionData.caption(i)), key)
        assert(r.get("score").floatValue() == CaptionData.score(i), key)
        assert(r.get("label").asInt() == CaptionData.label(i), key)
        assert(r.get("index").asLong() == i.toLong, key)
        assert(r.get("image_md5").asText() == pixels(key), s"the image of $key")
      }
    }
  }
}
