package dev.spindle.spark.feed

import java.nio.file.{Files, Path}
import java.util.{List => JList, Map => JMap}

import scala.jdk.CollectionConverters._

import dev.spindle.{FeedReport, Spindle}
import dev.spindle.spark.cli.{FeedCommand, SpindleMain}
import dev.spindle.spark.manifest.{Manifest, ManifestCache}
import dev.spindle.spark.plan.{Digest, EpochPlan, LoaderState, MixSpec, Mixture}
import dev.spindle.spark.testkit.{ParquetInputs, SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/** Weighted mixtures through `feed`, on real tar (and Parquet) data sets in local-mode Spark. */
class FeedMixSuite extends AnyFunSuite with SparkFixture {
  import FeedData._

  // a: 120 samples in 3 shards; b: 60 in 2. A 70/30 epoch of 180 takes 126 of a (a is up-sampled:
  // 6 samples repeat) and 54 of b (b is down-sampled).
  private val countsA = Seq(40, 30, 50)
  private val countsB = Seq(25, 35)

  private def feed(args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--size", "8", "--partitions", "3") ++ args).toArray)

  private def mixArgs(a: Path, b: Path) = Seq("--mix", s"a=0.7:$a", "--mix", s"b=0.3:$b")

  /** The catalog and mixture feed plans with: the sources' manifests end to end. */
  private def catalog(a: String, b: String, entries: String): (Manifest, Mixture) = {
    val (ma, mb) = (manifestOf(a), manifestOf(b))
    val m = new Manifest("mix", (ma.shards().asScala ++ mb.shards().asScala).asJava, JList.of())
    (m, Mixture.of(MixSpec.parse(entries, "total"), m.offsets(), Array(ma.shards().size, mb.shards().size)))
  }

  private def mixReport(r: FeedReport): Seq[Map[String, AnyRef]] =
    r.get("mix").asInstanceOf[JMap[String, AnyRef]].get("sources").asInstanceOf[JList[JMap[String, AnyRef]]]
      .asScala.map(_.asScala.toMap).toSeq

  private def samplesOf(r: FeedReport): Seq[Long] = mixReport(r).map(_("samples").asInstanceOf[Long])

  test("a 70/30 mixture stopped at 2 ranks and resumed at 3 delivers the uninterrupted order, 70/30") {
    TestFiles.withTempDir("feed-mix") { dir =>
      val a = tars(dir.resolve("a"), countsA)
      val b = tars(dir.resolve("b"), countsB)
      val (m, mix) = catalog(a.toString, b.toString, s"a=0.7:$a;b=0.3:$b")
      val plan = EpochPlan.create(m, spec(0, 0, 2, 5), mix) // 180 samples: 18 batches of 5 per rank
      val common = mixArgs(a, b) ++ Seq("--batch-size", "5")

      val full = feed(common ++ Seq("--world-size", "2"): _*)
      assert(digests(full, 0) == plan.ranks().asScala.map(_.digest()).toSeq)
      assert(samplesOf(full) == Seq(126L, 54L))
      val realised = mixReport(full).map(_("realised").asInstanceOf[Double])
      assert(math.abs(realised.head - 0.7) < 0.01 && math.abs(realised(1) - 0.3) < 0.01, realised)
      assert(mixReport(full).map(_("proportion")) == Seq(0.7, 0.3))
      assert(full.get("failures") == 0L)
      // Every source's tar member indexes are used: only planned samples are read.
      val io = full.get("io").asInstanceOf[JMap[String, AnyRef]]
      assert(io.get("shard_opens_indexed") == io.get("shard_opens"), io)
      assert(io.get("shard_opens").asInstanceOf[Number].longValue() > 0)

      val saved = dir.resolve("state.json")
      val stopped = feed(common ++ Seq("--world-size", "2", "--stop-after-batches", "6",
        "--save-state", saved.toString): _*)
      assert(LoaderState.fromJson(Files.readString(saved)).mixture() == mix)
      val resumed = feed(mixArgs(a, b) ++ Seq("--world-size", "3", "--resume", saved.toString): _*)

      // Bit for bit: the first run delivered each rank's first 6 batches of the uninterrupted plan;
      // the resumed run's ranks deliver, in rank order, the rest of the uninterrupted ranks' orders.
      val head = plan.ranks().asScala.map(r => r.indices(0, 6)).toSeq
      assert(digests(stopped, 0) == head.map(Digest.of))
      val rest = plan.ranks().asScala.flatMap(r => r.indices(6, 18).toSeq).toArray // 120 samples
      assert(ranks(resumed).forall(_("leg") == 1))
      assert(digests(resumed, 0) == Seq(0, 1, 2).map(r => Digest.of(rest.slice(40 * r, 40 * r + 40))))
      val delivered = samplesOf(stopped).zip(samplesOf(resumed)).map { case (x, y) => x + y }
      assert(delivered == samplesOf(full))
      assert(math.abs(delivered.head.toDouble / delivered.sum - 0.7) < 0.01)
      assert(resumed.get("state").asInstanceOf[JMap[String, AnyRef]].get("epoch") == 1)
    }
  }

  test("a tar source and a Parquet source mix; the realised proportions are reported") {
    TestFiles.withTempDir("feed-mix-parquet") { dir =>
      val a = tars(dir.resolve("a"), countsA)
      val b = ParquetInputs.spark(spark, dir.resolve("b"), rows(countsB), struct = false)
      val r = feed("--mix", s"a=1:$a", "--mix", s"b=3:$b", "--mix-epoch", "samples:100",
        "--world-size", "2", "--batch-size", "5")
      val (m, _) = catalog(a.toString, b.toString, s"a=1:$a;b=3:$b")
      val mix = Mixture.of(MixSpec.parse(s"a=1:$a;b=3:$b", "samples:100"), m.offsets(), Array(3, 2))
      assert(digests(r, 0) == EpochPlan.create(m, spec(0, 0, 2, 5), mix).ranks().asScala.map(_.digest()).toSeq)
      assert(samplesOf(r) == Seq(25L, 75L))
      assert(r.get("failures") == 0L)
    }
  }

  test("the Java API's mix(...) plans the same mixture as --mix; with input(...) it is refused") {
    TestFiles.withTempDir("feed-mix-api") { dir =>
      val a = tars(dir.resolve("a"), countsA)
      val b = tars(dir.resolve("b"), countsB)
      val r = Spindle.feed(spark).mix("a", 0.7, a.toString).mix("b", 0.3, b.toString).mixEpoch("samples:60")
        .worldSize(2).batchSize(5).size(8).run()
      val (m, _) = catalog(a.toString, b.toString, s"a=0.7:$a;b=0.3:$b")
      val mix = Mixture.of(MixSpec.parse(s"a=0.7:$a;b=0.3:$b", "samples:60"), m.offsets(), Array(3, 2))
      assert(digests(r, 0) == EpochPlan.create(m, spec(0, 0, 2, 5), mix).ranks().asScala.map(_.digest()).toSeq)
      assert(samplesOf(r) == Seq(42L, 18L))
      assert(r.get("input") == s"mix:a=0.7:$a;b=0.3:$b")
      val both = intercept[IllegalArgumentException](
        Spindle.feed(spark).input(a.toString).mix("b", 1, b.toString).worldSize(2).run())
      assert(both.getMessage.contains("feed reads either one input or a mixture"), both.getMessage)
    }
  }

  test("bad --mix entries, --mix with --input, and mixtures where there is no epoch order are refused") {
    TestFiles.withTempDir("feed-mix-bad") { dir =>
      val a = tars(dir.resolve("a"), countsA)
      def usage(args: String*): String = {
        val err = new java.io.ByteArrayOutputStream()
        val code = SpindleMain.run(("feed" +: args).toArray,
          new java.io.PrintStream(new java.io.ByteArrayOutputStream()), new java.io.PrintStream(err))
        assert(code == 2, err.toString)
        err.toString
      }
      assert(usage("--mix", s"a=0.7:$a", "--mix", s"b0.3:$a", "--world-size", "2")
        .contains("Invalid mixture entry \"b0.3:" + a))
      assert(usage("--mix", s"a=0.7:$a", "--mix", s"a=0.3:$a", "--world-size", "2")
        .contains("the name \"a\" is used by more than one source"))
      assert(usage("--mix", s"a=-1:$a", "--world-size", "2").contains("the proportion -1 must be > 0"))
      assert(usage("--input", a.toString, "--mix", s"a=1:$a", "--world-size", "2")
        .contains("--input and --mix (spark.spindle.mix) do not go together"))
      assert(usage("--world-size", "2").contains("--input=URI' (or --mix NAME=PROPORTION:URI"))
      assert(usage("--mix", s"a=1:$a", "--mix-epoch", "forever", "--world-size", "2")
        .contains("Invalid mixture epoch \"forever\""))
      val empty = Files.createDirectories(dir.resolve("empty"))
      TestFiles.writeTar(empty.resolve("shard-000.tar"), Seq.empty)
      val none = intercept[IllegalArgumentException](
        feed("--mix", s"a=1:$a", "--mix", s"e=1:$empty", "--world-size", "2"))
      assert(none.getMessage.contains("source \"e\""), none.getMessage)

      val cache = intercept[IllegalArgumentException](
        feed("--mix", s"a=1:$a", "--manifest", dir.resolve("m.json").toString, "--world-size", "2"))
      assert(cache.getMessage.contains("--manifest (a manifest cache file) cannot be used with a mixture"))
      val ds = intercept[IllegalArgumentException](
        spark.read.format("spindle").option("mix", s"a=1:$a").load(a.toString))
      assert(ds.getMessage.contains("reads either one input URI (load(uri)) or a mixture (option mix"))
      val pre = intercept[IllegalArgumentException](
        Spindle.preprocess(spark).input(a.toString).set("spark.spindle.mix", s"a=1:$a")
          .output(dir.resolve("out").toString).run())
      assert(pre.getMessage.contains("preprocess does not read mixtures"))
    }
  }

  test("sources that disagree on class names or on what a stored sample is are refused, naming them") {
    def loaded(input: String, classes: Seq[String]) = new ManifestCache.Loaded(
      new Manifest(input, dev.spindle.spark.plan.Plans.manifest(Seq(3, 4), input).shards(), classes.asJava),
      null, "created")
    val spec = MixSpec.parse("cats=1:file:/c;dogs=1:file:/d", "total")
    val e = intercept[IllegalArgumentException](MixedInput.of(spec,
      JList.of(loaded("file:/c", Seq("cat", "dog")), loaded("file:/d", Seq("dog", "cat")))))
    assert(e.getMessage == "Refused mixture: sources \"cats\" and \"dogs\" name their labels differently" +
      " ([cat, dog] vs [dog, cat]); a label must mean the same class in every source")
    val ok = MixedInput.of(spec, JList.of(loaded("file:/c", Seq("a")), loaded("file:/d", Seq("a"))))
    assert(ok.loaded().manifest().shards().size == 4 && ok.mixture().samples() == 14)
  }

  test("a resume with another mixture is refused, naming both") {
    TestFiles.withTempDir("feed-mix-resume") { dir =>
      val a = tars(dir.resolve("a"), countsA)
      val b = tars(dir.resolve("b"), countsB)
      val saved = dir.resolve("state.json")
      feed(mixArgs(a, b) ++ Seq("--world-size", "2", "--batch-size", "5", "--stop-after-batches", "2",
        "--save-state", saved.toString): _*)
      val other = intercept[IllegalArgumentException](
        feed("--mix", s"a=0.5:$a", "--mix", s"b=0.5:$b", "--world-size", "2", "--resume", saved.toString))
      assert(other.getMessage.contains("Resume state does not match the requested mixture"), other.getMessage)
      assert(other.getMessage.contains("a (weight 7, 3 shards)"))
      val single = intercept[IllegalArgumentException](
        feed("--input", a.toString, "--world-size", "2", "--resume", saved.toString))
      assert(single.getMessage.contains("the run asks for a single source"), single.getMessage)
    }
  }
}
