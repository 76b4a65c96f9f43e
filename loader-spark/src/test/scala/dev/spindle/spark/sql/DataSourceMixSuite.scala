package dev.spindle.spark.sql

import java.nio.file.Path
import java.util.{List => JList}

import scala.jdk.CollectionConverters._

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.manifest.Manifest
import dev.spindle.spark.plan.{EpochPlan, MixSpec, Mixture, Remainder}
import dev.spindle.spark.testkit.{SparkFixture, TestFiles}
import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite

/**
 * The data source's option `mix`: one epoch of a weighted mixture as a DataFrame, in the mixture's
 * plan order (one rank, the whole epoch), over real tar data sets in local-mode Spark.
 */
class DataSourceMixSuite extends AnyFunSuite with SparkFixture {
  // a: 70 samples in 2 shards, b: 30 in 1
  private val countsA = Seq(40, 30)
  private val countsB = Seq(30)

  private def read(entries: String, more: Map[String, String] = Map.empty): DataFrame =
    spark.read.format("spindle").option("decode", "false").option("mix", entries).options(more).load()

  /**
   * (source, shard file, key, index) of every row, in the DataFrame's order; the `source` column
   * must name the source whose folder holds the row's shard.
   */
  private def rows(df: DataFrame): Seq[(String, String, String, Long)] = {
    assert(df.schema.fieldNames.toSeq == Seq("image", "format", "label", "key", "shard", "index", "source"))
    df.select("shard", "key", "index", "source").collect().toSeq.map { r =>
      val shard = r.getString(0)
      val source = r.getString(3)
      assert(shard.contains(s"/$source/"), (source, shard))
      (source, shard.substring(shard.lastIndexOf('/') + 1), r.getString(1), r.getLong(2))
    }
  }

  private def sources(dir: Path): (Path, Path) =
    (FeedData.tars(dir.resolve("a"), countsA), FeedData.tars(dir.resolve("b"), countsB))

  /** The sources' catalog and mixture as feed plans them: the manifests laid end to end. */
  private def planned(a: Path, b: Path, entries: String, epoch: String, seed: Long, batch: Int): Seq[Long] = {
    val (ma, mb) = (FeedData.manifest(a), FeedData.manifest(b))
    val m = new Manifest("mix", (ma.shards().asScala ++ mb.shards().asScala).asJava, JList.of())
    val mixture = Mixture.of(MixSpec.parse(entries, epoch), m.offsets(), Array(ma.shards().size, mb.shards().size))
    val plan = EpochPlan.create(m, FeedData.spec(seed, 0, 1, batch, Remainder.DROP_LAST), mixture)
    plan.rank(0).indices(0, plan.rank(0).batches()).toSeq
  }

  test("a 70/30 mixture of 70 and 30 samples: every sample once, 7 of every 10 rows from a, in plan order") {
    TestFiles.withTempDir("ds-mix") { dir =>
      val (a, b) = sources(dir)
      val entries = s"a=0.7:$a;b=0.3:$b"
      val got = rows(read(entries, Map("seed" -> "7", "partitionBytes" -> "2000")))
      assert(got.size == 100)
      assert(got.groupBy(_._1).map { case (s, r) => s -> r.size } == Map("a" -> 70, "b" -> 30))
      assert(got.grouped(10).forall(_.count(_._1 == "a") == 7)) // the proportions hold per 10 rows
      assert(got.map(r => (r._1, r._2, r._3)).distinct.size == 100) // every source sample exactly once
      // the order is the mixture's plan for one rank; feed at world size 1 delivers the same order
      // (its last batch of fewer than batch-size samples dropped)
      val plan = planned(a, b, entries, "total", 7, 1)
      assert(got.map(_._4) == plan)
      assert(planned(a, b, entries, "total", 7, 8) == plan.take(96))
      // the partitions split the plan, not the order: one partition or many give the same rows
      assert(read(entries, Map("seed" -> "7")).rdd.getNumPartitions == 1)
      assert(read(entries, Map("seed" -> "7", "partitionBytes" -> "2000")).rdd.getNumPartitions > 3)
      assert(rows(read(entries, Map("seed" -> "7"))) == got)
    }
  }

  test("deterministic for a seed; another seed is another order of the same samples") {
    TestFiles.withTempDir("ds-mix-seed") { dir =>
      val (a, b) = sources(dir)
      val entries = s"a=0.7:$a;b=0.3:$b"
      val first = rows(read(entries, Map("seed" -> "3", "partitionBytes" -> "3000")))
      assert(rows(read(entries, Map("seed" -> "3", "partitionBytes" -> "3000"))) == first)
      val other = rows(read(entries, Map("seed" -> "4", "partitionBytes" -> "3000")))
      assert(other != first && other.sortBy(_._4) == first.sortBy(_._4))
    }
  }

  test("up- and down-sampling: 50/50 of 70 and 30 takes 50 distinct of a, every b once and 20 of b twice") {
    TestFiles.withTempDir("ds-mix-resample") { dir =>
      val (a, b) = sources(dir)
      val got = rows(read(s"a=1:$a;b=1:$b", Map("seed" -> "5", "partitionBytes" -> "2500")))
      assert(got.size == 100)
      val times = got.groupBy(r => (r._1, r._2, r._3)).map { case (k, v) => k -> v.size }
      val (ta, tb) = times.partition(_._1._1 == "a")
      assert(ta.size == 50 && ta.values.forall(_ == 1)) // a down-sampled: the start of its order
      assert(tb.size == 30 && tb.values.count(_ == 2) == 20 && tb.values.count(_ == 1) == 10) // b up-sampled
      // all-exhausted: every sample of both at least once (the epoch ends with a's last one), 50/50
      val all = rows(read(s"a=1:$a;b=1:$b", Map("seed" -> "5", "mix.epoch" -> "all-exhausted")))
      assert(all.map(r => (r._1, r._2, r._3)).distinct.size == 100)
      assert(all.count(_._1 == "a") == 70 && all.last._1 == "a" && all.count(_._1 == "b") == 69)
    }
  }

  test("a bad mix entry is refused naming the option and key; mix with a path is refused naming both") {
    TestFiles.withTempDir("ds-mix-bad") { dir =>
      val (a, b) = sources(dir)
      val bad = intercept[IllegalArgumentException](read(s"a=0.7:$a;b0.3:$b"))
      assert(bad.getMessage.contains("Invalid value for option 'mix' (spark.spindle.mix)"), bad.getMessage)
      assert(bad.getMessage.contains("Invalid mixture entry \"b0.3:"), bad.getMessage)
      val epoch = intercept[IllegalArgumentException](read(s"a=1:$a", Map("mix.epoch" -> "forever")))
      assert(epoch.getMessage.contains("option 'mix.epoch' (spark.spindle.mix.epoch)"), epoch.getMessage)
      val both = intercept[IllegalArgumentException](
        spark.read.format("spindle").option("mix", s"a=1:$a").load(a.toString))
      assert(both.getMessage.contains("either one input URI (load(uri)) or a mixture (option mix"), both.getMessage)
      val missing = intercept[Exception](read(s"a=1:$a;b=1:${dir.resolve("nowhere")}"))
      assert(missing.getMessage.contains("nowhere"), missing.getMessage)
      val field = intercept[IllegalArgumentException](read(s"a=1:$a", Map("fields" -> "image=png,source=cls")))
      assert(field.getMessage.contains("The field 'source'"), field.getMessage)
    }
  }

  test("the session's spark.spindle.mix: load() reads the mixture, load(uri) still reads the one input") {
    TestFiles.withTempDir("ds-mix-session") { dir =>
      val (a, b) = sources(dir)
      spark.conf.set("spark.spindle.mix", s"a=0.7:$a;b=0.3:$b")
      try {
        val mixed = spark.read.format("spindle").option("decode", "false").load()
        assert(mixed.schema.fieldNames.last == "source" && mixed.count() == 100)
        val one = spark.read.format("spindle").option("decode", "false").load(b.toString)
        assert(!one.schema.fieldNames.contains("source") && one.count() == 30)
      } finally spark.conf.unset("spark.spindle.mix")
    }
  }
}
