package dev.spindle.spark.sql

import java.nio.file.Path

import dev.spindle.spark.batch.ExecutorAllocator
import dev.spindle.spark.testkit.{CaptionData, ParquetInputs, SparkFixture, TestFiles, TextCorpus}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/**
 * Samples without an image through the `spindle` data source: declared fields with no `image`
 * (pre-tokenised text in Parquet, WebDataset tars of `.txt`/`.tok`/`.json` members only) give rows
 * of `label` (-100), `key`, `shard`, `index` and the fields, with no image column, nothing decoded
 * and no image setting needed; bad values are quarantined or refused as for samples with images.
 */
class TextOnlySuite extends AnyFunSuite with SparkFixture {
  private val Text = "text=text:string,tokens=tokens:list<int32>"

  private def read(in: Path, options: (String, String)*): DataFrame =
    spark.read.format("spindle").option("batchSize", "4").option("partitionBytes", "1")
      .options(options.toMap).load(in.toString)

  private val RowColumns = Seq(
    StructField("label", IntegerType, nullable = false),
    StructField("key", StringType, nullable = false),
    StructField("shard", StringType, nullable = false),
    StructField("index", LongType, nullable = false))

  /** Every row's text is its sentence, and its tokens the tokenizer's ids of that text. */
  private def assertSentences(rows: Seq[Row], number: Row => Int): Unit = rows.foreach { r =>
    val i = number(r)
    assert(r.getAs[String]("text") == TextCorpus.sentence(i), s"row $i")
    val tokens = r.getAs[scala.collection.Seq[Int]]("tokens").toSeq
    assert(tokens == TextCorpus.tokens(TextCorpus.sentence(i)), s"row $i")
    assert(tokens.map(t => TextCorpus.Vocabulary(t - 1)).mkString(" ") == r.getAs[String]("text"))
    assert(r.getAs[Int]("label") == -100)
  }

  test("example: a pre-tokenised Parquet corpus (no image, no label column) is read, one column per field") {
    TestFiles.withTempDir("text-parquet") { dir =>
      val in = TextCorpus.writeParquet(dir.resolve("in"), 23, files = 2)
      val df = read(in, "fields" -> Text)
      assert(df.schema.fields.toSeq == RowColumns ++ Seq(
        StructField("text", StringType, nullable = false),
        StructField("tokens", ArrayType(IntegerType, containsNull = false), nullable = false)))
      val rows = df.collect().toSeq
      assert(rows.map(_.getAs[Long]("index")).sorted == (0L until 23L))
      assertSentences(rows, r => {
        val Array(file, row) = r.getAs[String]("key").split('#')
        (if (file == "text-000.parquet") 0 else 12) + row.toInt
      })
      assert(rows.map(r => r.getAs[String]("shard").split('/').last).distinct.sorted ==
        Seq("text-000.parquet", "text-001.parquet"))
      // decode=false is the same: there is nothing to decode; a second read uses the manifest cache
      val again = read(in, "fields" -> Text, "decode" -> "false").collect().toSeq
      assert(again.head.schema == df.schema)
      assert(again.map(r => r.getAs[String]("key") -> r.getAs[String]("text")).toMap ==
        rows.map(r => r.getAs[String]("key") -> r.getAs[String]("text")).toMap)
      // SQL over the text, and a subset of the columns
      val dogs = spark.sql(s"SELECT count(*) FROM spindle.`$in` WITH ('fields' = 'text=text')" +
        " WHERE text LIKE 'a dog %'").collect().head.getLong(0)
      assert(dogs == (0 until 23).count(i => TextCorpus.sentence(i).startsWith("a dog ")))
      assert(read(in, "fields" -> Text).select("tokens").collect().length == 23)
      // the rows' tokens train a tiny PyTorch next-token model on the CPU: its loss decreases
      val (first, last) = trainTinyLm(dir, rows.map(_.getAs[scala.collection.Seq[Int]]("tokens").toSeq))
      assert(last < first * 0.7, s"loss $first -> $last")
      assertAllocatorsClosed()
    }
  }

  /**
   * A next-token predictor (embedding + linear, 16 dimensions) trained by 40 full-batch SGD steps
   * on `docs`, padded with id 0 (ignored by the loss), in Debian's PyTorch; its first and last loss.
   */
  private def trainTinyLm(dir: Path, docs: Seq[Seq[Int]]): (Double, Double) = {
    val script = dir.resolve("tiny_lm.py")
    java.nio.file.Files.writeString(script,
      """import json, sys
        |import torch
        |docs = json.load(open(sys.argv[1]))
        |vocab = int(sys.argv[2]) + 1
        |torch.manual_seed(0)
        |batch = torch.nn.utils.rnn.pad_sequence([torch.tensor(d) for d in docs], batch_first=True)
        |model = torch.nn.Sequential(torch.nn.Embedding(vocab, 16), torch.nn.Linear(16, vocab))
        |opt = torch.optim.SGD(model.parameters(), lr=0.5)
        |losses = []
        |for _ in range(40):
        |    logits = model(batch[:, :-1])
        |    loss = torch.nn.functional.cross_entropy(
        |        logits.reshape(-1, vocab), batch[:, 1:].reshape(-1), ignore_index=0)
        |    opt.zero_grad(); loss.backward(); opt.step()
        |    losses.append(loss.item())
        |print(json.dumps([losses[0], losses[-1]]))
        |""".stripMargin)
    val data = dir.resolve("tokens.json")
    java.nio.file.Files.writeString(data, docs.map(_.mkString("[", ",", "]")).mkString("[", ",", "]"))
    val out = new StringBuilder
    val code = scala.sys.process.Process(Seq("/usr/bin/python3", script.toString, data.toString,
      TextCorpus.Vocabulary.size.toString)).!(scala.sys.process.ProcessLogger(l => out.append(l).append('\n'), l => out.append(l).append('\n')))
    assert(code == 0, out.toString)
    val Array(first, last) = out.toString.trim.linesIterator.toSeq.last.stripPrefix("[").stripSuffix("]").split(",").map(_.trim.toDouble)
    (first, last)
  }

  test("WebDataset tars of .txt, .tok and .json members only: rows without an image; a missing member quarantines its sample") {
    TestFiles.withTempDir("text-tars") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 2, perShard = 5)
      TestFiles.writeTar(in.resolve("text-bad.tar"),
        TextCorpus.members(100).filterNot(_._1.endsWith(".tok")) ++
          TextCorpus.members(101).map { case (n, b) => if (n.endsWith(".json")) n -> ascii("{\"words\":") else n -> b })
      val q = dir.resolve("q")
      val df = read(in, "fields" -> "text=txt,tokens=tok:list<int32>,meta=json,label=cls",
        "maxFailures" -> "5", "quarantine" -> q.toString)
      assert(df.schema.fieldNames.toSeq == Seq("label", "key", "shard", "index", "text", "tokens", "meta"))
      val noLabel = read(in, "fields" -> "text=txt,tokens=tok:list<int32>,meta=json",
        "maxFailures" -> "5", "quarantine" -> q.toString).collect().toSeq
      assert(noLabel.map(_.getAs[String]("key")).sorted == (0 until 10).map(TextCorpus.key))
      assertSentences(noLabel, r => TextCorpus.number(r.getAs[String]("key")))
      noLabel.foreach(r => assert(r.getAs[String]("meta") ==
        s"""{"words": ${TextCorpus.tokens(r.getAs[String]("text")).size}}"""))
      val listed = spark.read.json(q.toString).collect()
        .map(r => r.getAs[String]("key") -> r.getAs[String]("reason")).toMap
      assert(listed.keySet == Set(TextCorpus.key(100), TextCorpus.key(101)), listed)
      assert(listed(TextCorpus.key(100)).startsWith(s"no '.tok' member for field 'tokens' of key '${TextCorpus.key(100)}'"), listed)
      assert(listed(TextCorpus.key(101)).contains("json"), listed)
      // with a declared label, the text samples have none: each is quarantined saying so
      val q2 = dir.resolve("q2")
      assert(read(in, "fields" -> "text=txt,label=cls", "maxFailures" -> "20", "quarantine" -> q2.toString)
        .collect().isEmpty)
      assert(spark.read.json(q2.toString).collect().map(_.getAs[String]("reason"))
        .forall(_.startsWith("no '.cls' member for field 'label'")))
      assertAllocatorsClosed()
    }
  }

  test("Parquet without an image: a missing or mistyped declared column is refused naming file, column and types; a null quarantines its row") {
    TestFiles.withTempDir("text-parquet-bad") { dir =>
      val in = TextCorpus.writeParquet(dir.resolve("in"), 5, nullText = 3)
      def failure(fields: String): String = {
        val e = intercept[Exception](read(in, "fields" -> fields).collect())
        Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")
      }
      val missing = failure("text=text,ids=ids:list<int32>")
      assert(missing.contains("text-000.parquet") && missing.contains("'ids'"), missing)
      val typed = failure("text=text,tokens=tokens:list<float32>")
      assert(typed.contains("column 'tokens'") && typed.contains("list<float32>"), typed)
      val q = dir.resolve("q")
      val rows = read(in, "fields" -> Text, "maxFailures" -> "5", "quarantine" -> q.toString).collect()
      assert(rows.map(_.getAs[Long]("index")).sorted.toSeq == Seq(0L, 1L, 2L, 4L))
      val listed = spark.read.json(q.toString).collect().map(r => r.getAs[String]("key") -> r.getAs[String]("reason"))
      assert(listed.toSeq == Seq("text-000.parquet#3" -> "the value is null (field 'text', column 'text', row 3)"))
      assertAllocatorsClosed()
    }
  }

  test("Parquet with an image and no label column: a declaration without label reads no label column") {
    TestFiles.withTempDir("image-only-parquet") { dir =>
      val captions = CaptionData.writeParquet(dir.resolve("captions"), 5)
      val in = dir.resolve("in")
      java.nio.file.Files.createDirectories(in)
      ParquetInputs.duckdb(s"COPY (SELECT image, caption FROM read_parquet('${captions.resolve("captions.parquet")}'))" +
        s" TO '${in.resolve("images.parquet")}' (FORMAT parquet)")
      val rows = read(in, "fields" -> "image=image,caption=caption:string", "size" -> "16").collect()
      assert(rows.map(_.getAs[Long]("index")).sorted.toSeq == (0L until 5L))
      rows.foreach { r =>
        val i = r.getAs[Long]("index").toInt
        assert(r.getAs[String]("caption") == CaptionData.caption(i) && r.getAs[Int]("label") == -100)
        assert(r.getAs[Array[Byte]]("image").length == 16 * 16 * 3)
      }
      // without a declaration the label column is still required, as before, naming it
      val e = intercept[Exception](read(in, "size" -> "16").collect())
      val msg = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")
      assert(msg.contains("has no column 'label' for the label"), msg)
      assertAllocatorsClosed()
    }
  }

  private def assertAllocatorsClosed(): Unit = {
    val root = ExecutorAllocator.root(Long.MaxValue)
    assert(root.getChildAllocators.isEmpty, root.toVerboseString)
    assert(root.getAllocatedMemory == 0)
  }
}
