package dev.spindle.spark.feed

import java.nio.file.{Files, Path}
import java.util.{List => JList, Map => JMap}

import scala.jdk.CollectionConverters._

import dev.spindle.FeedReport
import dev.spindle.spark.cli.FeedCommand
import dev.spindle.spark.plan.{Digest, EpochPlan, LoaderState, PlanSpec, Remainder, TokenBudget}
import dev.spindle.spark.testkit.{SparkFixture, TestFiles, TextCorpus}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `feed --batch-tokens` over a pre-tokenised Parquet corpus in local-mode Spark: batches packed to
 * the budget as the plan defines them (digests), the report's token counts, a stop at 2 ranks
 * resumed at 3 bit for bit, and bad settings refused by name.
 */
class FeedBudgetSuite extends AnyFunSuite with SparkFixture {
  import FeedData._

  private val Fields = "text=text:string,tokens=tokens:list<int32>"
  private val N = 60

  private def feed(args: String*): FeedReport =
    FeedCommand.run(spark, (Seq("--fields", Fields, "--partitions", "3") ++ args).toArray)

  /** The corpus' lengths by dataset index: 20 rows a file, index 20 * F + R is sentence 20 * F + R. */
  private def budget(tokens: Int): TokenBudget =
    TokenBudget.of("tokens", tokens).withLengths(
      Array.tabulate(N)(i => TextCorpus.tokens(TextCorpus.sentence(i)).size))

  private def corpus(dir: Path): Path = TextCorpus.writeParquet(dir.resolve("in"), N, files = 3)

  test("feed --batch-tokens delivers the planned packed batches, and a 2 -> 3 resume continues bit for bit") {
    TestFiles.withTempDir("feed-budget") { dir =>
      val in = corpus(dir)
      val m = manifestOf(in.toString,
        dev.spindle.spark.config.Settings.read(JMap.of("spark.spindle.fields", Fields)).parquetColumns())
      val spec = new PlanSpec(0, 0, 2, 6, Remainder.PAD, PlanSpec.DEFAULT_SHUFFLE_WINDOW).withBudget(budget(24))
      val plan = EpochPlan.create(m, spec)
      val common = Seq("--input", in.toString, "--batch-size", "6", "--batch-tokens", "24",
        "--remainder", "PAD")

      val full = feed(common ++ Seq("--world-size", "2"): _*)
      assert(digests(full, 0) == plan.ranks().asScala.map(_.digest()).toSeq)
      assert(full.get("batch_tokens") == 24 && full.get("batch_tokens_field") == "tokens")
      val epochs = full.get("token_epochs").asInstanceOf[JList[JMap[String, AnyRef]]].asScala
      assert(epochs.size == 1)
      assert(epochs.head.get("batches") == 2L * plan.batchesPerRank())
      assert(epochs.head.get("tokens") == (0 until N).map(i => TextCorpus.tokens(TextCorpus.sentence(i)).size.toLong).sum)
      assert(full.get("samples") == N.toLong && full.get("failures") == 0L)
      // packed: more batches than fixed batches of 6 would make, none over the budget
      assert(plan.batchesPerRank() > N / 12)
      for (r <- plan.ranks().asScala; k <- 0 until r.batches()) {
        assert(r.batchTokens(k) <= 24 && r.batchRows(k) <= 6)
      }

      val saved = dir.resolve("state.json")
      val stopped = feed(common ++ Seq("--world-size", "2", "--stop-after-batches", "3",
        "--save-state", saved.toString): _*)
      val state = LoaderState.fromJson(Files.readString(saved))
      assert(state.budget() == TokenBudget.of("tokens", 24))
      assert(digests(stopped, 0) == plan.ranks().asScala.map(r => Digest.of(r.indices(0, 3))).toSeq)
      val resumed = feed(Seq("--input", in.toString, "--batch-tokens", "24", "--world-size", "3",
        "--resume", saved.toString): _*)
      val expected = state.withBudget(budget(24)).resume(m, 3)
      assert(ranks(resumed).forall(_("leg") == 1))
      assert(digests(resumed, 0) == expected.ranks().asScala.map(_.digest()).toSeq)
      // together the two runs deliver every sample of the epoch once (padding apart)
      val before = plan.ranks().asScala.flatMap(r => (0 until 3).filter(r.paddedIn(_) == 0).flatMap(r.batch(_)))
      val after = expected.ranks().asScala.flatMap(r =>
        (0 until r.batches()).filter(r.paddedIn(_) == 0).flatMap(r.batch(_)))
      assert((before ++ after).sorted == (0L until N))

      val other = intercept[IllegalArgumentException] {
        feed(Seq("--input", in.toString, "--batch-tokens", "30", "--world-size", "3",
          "--resume", saved.toString): _*)
      }
      assert(other.getMessage.contains("spark.spindle.batchTokens") && other.getMessage.contains("30 tokens"))
    }
  }

  test("a sample longer than the budget is a batch of its own, quarantined with a reason, never dropped") {
    TestFiles.withTempDir("feed-budget-over") { dir =>
      val in = corpus(dir)
      val lengths = (0 until N).map(i => TextCorpus.tokens(TextCorpus.sentence(i)).size)
      val budgetTokens = lengths.max - 1
      val over = lengths.indices.filter(i => lengths(i) > budgetTokens)
      assert(over.nonEmpty && over.size < N / 4)
      val r = feed("--input", in.toString, "--batch-size", "6", "--batch-tokens", budgetTokens.toString,
        "--world-size", "2", "--remainder", "PAD", "--conf", "spark.spindle.maxFailures=0.5")
      assert(r.get("failures") == over.size.toLong)
      val q = quarantine(r)
      assert(q.map(_("index").asInstanceOf[Number].longValue()).sorted == over.map(_.toLong))
      q.foreach { e =>
        val why = e("reason").toString
        assert(why.contains("field 'tokens' holds") && why.contains(s"budget of $budgetTokens") &&
          why.contains("spark.spindle.batchTokens"), why)
      }
      // every other sample is delivered: the epoch's real rows are all samples
      assert(r.get("samples") == N.toLong)
    }
  }

  test("WebDataset tars' list members are counted as Parquet's list columns are") {
    TestFiles.withTempDir("feed-budget-tars") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 3, perShard = 20)
      val m = manifestOf(in.toString)
      val plan = EpochPlan.create(m,
        new PlanSpec(0, 0, 2, 6, Remainder.PAD, PlanSpec.DEFAULT_SHUFFLE_WINDOW).withBudget(budget(24)))
      val r = FeedCommand.run(spark, Array("--input", in.toString, "--fields", "text=txt,tokens=tok:list<int32>",
        "--batch-size", "6", "--batch-tokens", "24", "--remainder", "PAD", "--world-size", "2"))
      assert(digests(r, 0) == plan.ranks().asScala.map(_.digest()).toSeq)
      assert(r.get("samples") == N.toLong && r.get("failures") == 0L)
    }
  }

  test("bad token-budget settings are refused, naming the key or flag") {
    TestFiles.withTempDir("feed-budget-bad") { dir =>
      val in = corpus(dir).toString
      def refused(args: String*): String =
        intercept[Exception](FeedCommand.run(spark, (Seq("--input", in, "--world-size", "1") ++ args).toArray))
          .getMessage
      val none = refused("--fields", "text=text:string", "--batch-tokens", "24")
      assert(none.contains("spark.spindle.batchTokens") && none.contains("declares none"), none)
      val two = refused("--fields", "a=tokens:list<int32>,b=tokens:list<int64>", "--batch-tokens", "24")
      assert(two.contains("declares 2: a, b") && two.contains("--batch-tokens-field"), two)
      val unknown = refused("--fields", Fields, "--batch-tokens", "24", "--batch-tokens-field", "text")
      assert(unknown.contains("--batch-tokens-field") && unknown.contains("'text'"), unknown)
      val alone = refused("--fields", Fields, "--batch-tokens-field", "tokens")
      assert(alone.contains("spark.spindle.batchTokens (--batch-tokens) is 0"), alone)
      val negative = refused("--fields", Fields, "--batch-tokens", "-1")
      assert(negative.contains("--batch-tokens"), negative)
      val mixed = intercept[Exception](FeedCommand.run(spark, Array("--fields", Fields, "--world-size", "1",
        "--mix", s"a=0.5:$in", "--mix", s"b=0.5:$in", "--batch-tokens", "24"))).getMessage
      assert(mixed.contains("--mix") && mixed.contains("--batch-tokens"), mixed)
      val source = intercept[Exception] {
        spark.read.format("spindle").option("fields", Fields).option("batchTokens", "24").load(in).count()
      }
      assert(source.getMessage.contains("batchTokens") && source.getMessage.contains("feed and train"))
    }
  }
}
