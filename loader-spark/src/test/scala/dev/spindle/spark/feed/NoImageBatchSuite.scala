package dev.spindle.spark.feed

import java.nio.file.Path
import java.util.UUID

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import dev.spindle.spark.batch.BatchSchema
import dev.spindle.spark.manifest.{Manifest, PreprocessedInput}
import dev.spindle.spark.plan.{EpochPlan, Remainder}
import dev.spindle.spark.preprocess.PreprocessJob
import dev.spindle.spark.serve.{BatchConsumer, FeedInputs, FeedSettings, FeedTask}
import dev.spindle.spark.shard.HadoopConf
import dev.spindle.spark.testkit.{SparkFixture, TestFiles, TextCorpus}
import org.apache.arrow.vector.{IntVector, VarCharVector}
import org.apache.spark.api.java.JavaSparkContext
import org.scalatest.funsuite.AnyFunSuite

/**
 * A feed task of samples without an image hands its consumer batches without an image column (no
 * placeholder): `label` (-100), `key`, `index` and the declared fields, every sample once, from text
 * tars and from a `preprocess` output of them (its stored rows, no image column either).
 */
class NoImageBatchSuite extends AnyFunSuite with SparkFixture {
  private val fields = "text=txt,tokens=tok:list<int32>"

  /** Every batch of epoch 0 (world 2, batches of 3, PAD) as (column names, rows (key, label, text)). */
  private def fed(m: Manifest, conf: Map[String, String]): Seq[(Seq[String], Seq[(String, Int, String)])] = {
    val plan = EpochPlan.create(m, FeedData.spec(5, 0, 2, 3, Remainder.PAD))
    val inputs = JavaSparkContext.fromSparkContext(spark.sparkContext).broadcast(FeedInputs.of(plan, m))
    try {
      val task = new FeedTask("no-image", inputs, FeedSettings.from(conf.asJava, m),
        new HadoopConf(spark.sparkContext.hadoopConfiguration))
      val got = ArrayBuffer[(Seq[String], Seq[(String, Int, String)])]()
      val consumer: BatchConsumer = b => {
        val root = b.root
        val keys = root.getVector(BatchSchema.KEY).asInstanceOf[VarCharVector]
        val labels = root.getVector(BatchSchema.LABEL).asInstanceOf[IntVector]
        val texts = root.getVector("text").asInstanceOf[VarCharVector]
        got += ((root.getSchema.getFields.asScala.map(_.getName).toSeq, (0 until b.rows).map(r =>
          (new String(keys.get(r), "UTF-8"), labels.get(r), new String(texts.get(r), "UTF-8")))))
      }
      for (slices <- FeedPartitions.split(plan, plan.batchesPerRank(), 1).asScala)
        task.run(slices, consumer, UUID.randomUUID().toString)
      got.toSeq
    } finally inputs.destroy()
  }

  private def check(batches: Seq[(Seq[String], Seq[(String, Int, String)])], n: Int): Unit = {
    assert(batches.map(_._1).distinct == Seq(Seq("label", "key", "index", "text", "tokens")))
    val rows = batches.flatMap(_._2)
    assert(rows.forall(_._2 == BatchSchema.IGNORED_LABEL))
    // 2 ranks x 2 batches of 3 = 12 rows: the 11 samples once, one padding row repeats a sample
    assert(rows.size == 12 && rows.map(_._1).distinct.sorted == (0 until n).map(TextCorpus.key))
    assert(rows.forall(r => r._3 == TextCorpus.sentence(TextCorpus.number(r._1))))
  }

  test("text tars: the batches have no image column, every sample's text once") {
    TestFiles.withTempDir("noimage-feed") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 1, perShard = 6)
      check(fed(eleven(in), Map("spark.spindle.fields" -> fields)), 11)
    }
  }

  /** Eleven samples: `in/text-000.tar` (0..5) and `in/text-001.tar` (6..10). */
  private def eleven(in: Path): Manifest = {
    val members = (6 until 11).flatMap(TextCorpus.members)
    TestFiles.writeTar(in.resolve("text-001.tar"), members)
    FeedData.manifest(in)
  }

  test("a preprocess output without images: fed from its stored rows, no image column") {
    TestFiles.withTempDir("noimage-feed-stored") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 1, perShard = 6)
      eleven(in)
      val out = dir.resolve("out")
      PreprocessJob.run(spark, in.toString, out.toString, false,
        Map("spark.spindle.fields" -> fields, "spark.spindle.batchSize" -> "4").asJava)
      val m = PreprocessedInput.manifest(spark.sparkContext.hadoopConfiguration, out.toString)
      assert(m.stored() != null && !m.stored().images())
      check(fed(m, Map("spark.spindle.fields" -> "text=text:string,tokens=tokens:list<int32>")), 11)
    }
  }
}
