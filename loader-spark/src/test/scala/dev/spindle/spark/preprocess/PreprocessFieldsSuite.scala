package dev.spindle.spark.preprocess

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.sys.process._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import dev.spindle.spark.testkit.{ArrowFiles, CaptionData, ParquetInputs, SparkFixture, TestFiles, TextCorpus}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `preprocess` with declared fields writes each extra field as a column after `index`, in Arrow
 * (read back by arrow-js, an implementation independent of Arrow Java) and in Parquet (read back by
 * DuckDB); without fields the output's columns are today's.
 */
class PreprocessFieldsSuite extends AnyFunSuite with SparkFixture {
  private val fields = "image=jpg,label=cls,caption=txt,tokens=tok:list<int32>,score=score:float32,id=cls:int64"
  private val conf = Map(
    "spark.spindle.image.size" -> "16",
    "spark.spindle.batchSize" -> "4",
    "spark.spindle.partitionBytes" -> "1",
    "spark.spindle.fields" -> fields)

  private def preprocess(in: Path, out: Path, more: Map[String, String] = Map.empty): Unit =
    PreprocessJob.run(spark, in.toString, out.toString, false, (conf ++ more).asJava)

  private def expected(i: Int) = (CaptionData.key(i), CaptionData.label(i), CaptionData.caption(i),
    CaptionData.tokens(CaptionData.caption(i)), CaptionData.score(i), CaptionData.label(i).toLong)

  private def nodeDir(): Path = {
    val dir = Path.of("src/test/node").toAbsolutePath
    if (!Files.isDirectory(dir.resolve("node_modules/apache-arrow"))) {
      val msg = s"arrow-js not installed: run `npm ci --prefix $dir`"
      if (sys.env.get("CI").contains("true")) fail(msg) else cancel(msg)
    }
    dir
  }

  private def row(n: JsonNode) = (n.get("key").asText, n.get("label").asInt, n.get("caption").asText,
    n.get("tokens").elements().asScala.map(_.asInt).toSeq, n.get("score").floatValue, n.get("id").asLong)

  test("Arrow output: the extra fields are typed columns after index, as arrow-js reads them") {
    TestFiles.withTempDir("pp-fields-arrow") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 2, perShard = 5)
      preprocess(in, dir.resolve("out"))
      val files = ArrowFiles.partFiles(dir.resolve("out"))
      val (schema, _) = ArrowFiles.read(files.head)
      assert(schema.getFields.asScala.map(_.getName).toSeq ==
        Seq("image", "label", "key", "index", "caption", "tokens", "score", "id"))
      val json = (Seq("node", nodeDir().resolve("read_columns.mjs").toString) ++ files.map(_.toString)).!!
      val results = new ObjectMapper().readTree(json).elements().asScala.toSeq
      assert(results.head.get("fields").elements().asScala.map(_.asText).toSeq.drop(4) ==
        Seq("caption:Utf8", "tokens:List<Int32>", "score:Float32", "id:Int64"))
      val rows = results.flatMap(_.get("rows").elements().asScala).sortBy(_.get("index").asLong)
      assert(rows.map(row) == (0 until 10).map(expected))
    }
  }

  test("Parquet output: the extra fields are columns DuckDB reads, lists as LIST") {
    TestFiles.withTempDir("pp-fields-parquet") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 2, perShard = 5)
      val out = dir.resolve("out")
      preprocess(in, out, Map("spark.spindle.output.format" -> "parquet"))
      val json = dir.resolve("rows.json")
      ParquetInputs.duckdb(
        s"COPY (SELECT key, label, caption, tokens, score, id, typeof(tokens) AS t FROM read_parquet('$out/*.parquet')" +
          s" ORDER BY index) TO '$json' (FORMAT JSON, ARRAY true)")
      val rows = new ObjectMapper().readTree(json.toFile).elements().asScala.toSeq
      assert(rows.map(_.get("t").asText).distinct == Seq("INTEGER[]"))
      assert(rows.map(row) == (0 until 10).map(expected))
    }
  }

  test("a field that fails quarantines its sample in the output's report, never dropped") {
    TestFiles.withTempDir("pp-fields-bad") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 1, perShard = 3)
      TestFiles.writeTar(in.resolve("bad.tar"), Seq(
        "x.jpg" -> dev.spindle.spark.example.SampleImages.jpeg(1L, 0, 48, 40), "x.cls" -> TestFiles.ascii("1"),
        "x.txt" -> TestFiles.ascii("c"), "x.tok" -> TestFiles.ascii("[1,"), "x.score" -> TestFiles.ascii("1")))
      val report = PreprocessJob.run(spark, in.toString, dir.resolve("out").toString, false,
        (conf + ("spark.spindle.maxFailures" -> "5")).asJava)
      val rows = ArrowFiles.readAll(dir.resolve("out"))
      assert(rows.size == 3)
      val q = report.toJson
      assert(q.contains("field 'tokens' (list<int32>) in x.tok: not valid JSON"), q)
    }
  }

  test("a preprocess output read back keeps its extra columns: declared by name, in Arrow and Parquet") {
    TestFiles.withTempDir("pp-fields-back") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 2, perShard = 4)
      val back = "image=image,label=label,caption=caption:string,tokens=tokens:list<int32>,score=score:float32,id=id"
      for (format <- Seq("arrow", "parquet")) {
        val out = dir.resolve(format)
        preprocess(in, out, Map("spark.spindle.output.format" -> format))
        val rows = spark.read.format("spindle").option("fields", back).load(out.toString).collect()
        assert(rows.map(r => (r.getAs[String]("key"), r.getAs[Int]("label"), r.getAs[String]("caption"),
          r.getAs[scala.collection.Seq[Int]]("tokens").toSeq, r.getAs[Float]("score"), r.getAs[Long]("id")))
          .sortBy(_._1).toSeq == (0 until 8).map(expected), format)
        // without fields: today's columns, the extra ones not read
        assert(spark.read.format("spindle").load(out.toString).schema.fieldNames.toSeq ==
          Seq("image", "height", "width", "channels", "label", "key", "shard", "index"))
        // and preprocess of the output keeps them when declared
        val again = dir.resolve(format + "-again")
        PreprocessJob.run(spark, out.toString, again.toString, false, java.util.Map.of("spark.spindle.fields", back))
        if (format == "arrow") {
          assert(ArrowFiles.read(ArrowFiles.partFiles(again).head)._1.getFields.asScala.map(_.getName).toSeq ==
            Seq("image", "label", "key", "index", "caption", "tokens", "score", "id"))
        }
      }
    }
  }

  private val textFields = "text=txt,tokens=tok:list<int32>"
  private val textBack = "text=text:string,tokens=tokens:list<int32>"
  private def textRow(i: Int) = (TextCorpus.key(i), TextCorpus.sentence(i), TextCorpus.tokens(TextCorpus.sentence(i)))

  private def preprocessText(in: Path, out: Path, format: String) = PreprocessJob.run(spark, in.toString,
    out.toString, false, Map("spark.spindle.batchSize" -> "4", "spark.spindle.partitionBytes" -> "1",
      "spark.spindle.fields" -> textFields, "spark.spindle.output.format" -> format).asJava)

  test("samples without an image, Arrow output: no image column, as arrow-js reads it; the report says no image shape") {
    TestFiles.withTempDir("pp-text-arrow") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 2, perShard = 5)
      val out = dir.resolve("out")
      val report = preprocessText(in, out, "arrow").fields()
      assert(report.get("images") == 10L && report.containsKey("image_shape") && report.get("image_shape") == null, report)
      val manifest = new ObjectMapper().readTree(out.resolve("_manifest.json").toFile)
      assert(manifest.get("image_shape").isNull && manifest.get("transforms").isNull && manifest.get("rows").asLong == 10)
      assert(manifest.get("schema").elements().asScala.map(_.get("name").asText).toSeq == Seq("label", "key", "index"))
      val files = ArrowFiles.partFiles(out)
      assert(files.size == 2) // one per shard, each committed once
      val json = (Seq("node", nodeDir().resolve("read_columns.mjs").toString) ++ files.map(_.toString)).!!
      val results = new ObjectMapper().readTree(json).elements().asScala.toSeq
      assert(results.head.get("fields").elements().asScala.map(_.asText).toSeq ==
        Seq("label:Int32", "key:Utf8", "index:Int64", "text:Utf8", "tokens:List<Int32>"))
      val rows = results.flatMap(_.get("rows").elements().asScala).sortBy(_.get("index").asLong)
      assert(rows.map(n => (n.get("key").asText, n.get("text").asText, n.get("tokens").elements().asScala.map(_.asInt).toSeq))
        == (0 until 10).map(textRow))
      assert(rows.forall(_.get("label").asInt == -100))
    }
  }

  test("samples without an image, Parquet output: no image column nor shape metadata, as DuckDB reads it") {
    TestFiles.withTempDir("pp-text-parquet") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 2, perShard = 5)
      val out = dir.resolve("out")
      preprocessText(in, out, "parquet")
      val json = dir.resolve("rows.json")
      ParquetInputs.duckdb(
        s"COPY (SELECT * FROM read_parquet('$out/*.parquet') ORDER BY index) TO '$json' (FORMAT JSON, ARRAY true)",
        s"COPY (SELECT DISTINCT key::VARCHAR AS k FROM parquet_kv_metadata('$out/*.parquet')) TO '${dir.resolve("kv.json")}' (FORMAT JSON, ARRAY true)")
      val rows = new ObjectMapper().readTree(json.toFile).elements().asScala.toSeq
      assert(rows.head.fieldNames().asScala.toSeq == Seq("label", "key", "index", "text", "tokens"))
      assert(rows.map(n => (n.get("key").asText, n.get("text").asText, n.get("tokens").elements().asScala.map(_.asInt).toSeq))
        == (0 until 10).map(textRow))
      val kv = new ObjectMapper().readTree(dir.resolve("kv.json").toFile).elements().asScala.map(_.get("k").asText).toSeq
      assert(!kv.contains("spindle.image_shape"), kv)
    }
  }

  test("a preprocess output without images read back by the data source, declared without image; undeclared refused naming the key") {
    TestFiles.withTempDir("pp-text-back") { dir =>
      val in = TextCorpus.writeTars(dir.resolve("in"), shards = 2, perShard = 4)
      for (format <- Seq("arrow", "parquet")) {
        val out = dir.resolve(format)
        preprocessText(in, out, format)
        val df = spark.read.format("spindle").option("fields", textBack).load(out.toString)
        assert(df.schema.fieldNames.toSeq == Seq("label", "key", "shard", "index", "text", "tokens"), format)
        val rows = df.collect().map(r => (r.getAs[String]("key"), r.getAs[String]("text"),
          r.getAs[scala.collection.Seq[Int]]("tokens").toSeq)).sortBy(_._1).toSeq
        assert(rows == (0 until 8).map(textRow), format)
        val e = intercept[Exception](spark.read.format("spindle").load(out.toString).collect())
        assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(c =>
          c.getMessage != null && c.getMessage.contains("is a preprocess output of samples without an image") &&
            c.getMessage.contains("spark.spindle.fields")), e)
        // and preprocess of the output keeps its samples without images
        val again = dir.resolve(format + "-again")
        PreprocessJob.run(spark, out.toString, again.toString, false, java.util.Map.of("spark.spindle.fields", textBack))
        assert(spark.read.format("spindle").option("fields", textBack).load(again.toString).count() == 8)
      }
    }
  }
}
