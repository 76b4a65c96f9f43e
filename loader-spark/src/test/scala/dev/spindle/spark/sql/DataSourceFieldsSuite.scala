package dev.spindle.spark.sql

import java.nio.file.Path

import dev.spindle.spark.batch.ExecutorAllocator
import dev.spindle.spark.testkit.{CaptionData, SparkFixture, TestFiles}
import dev.spindle.spark.testkit.TestFiles.ascii
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/**
 * Declared fields through the `spindle` data source (the option `fields`): the image–caption
 * example (every caption arrives with its own image), one column per field with its type, an
 * image + caption job without labels, and bad fields quarantined and listed.
 */
class DataSourceFieldsSuite extends AnyFunSuite with SparkFixture {
  private def read(in: Path, options: (String, String)*): DataFrame =
    spark.read.format("spindle").option("size", "16").option("batchSize", "4")
      .option("partitionBytes", "1").options(options.toMap).load(in.toString)

  test("image–caption example: every caption arrives with its own image, one column per field") {
    TestFiles.withTempDir("ds-captions") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 3, perShard = 6)
      val df = read(in, "fields" -> "image=jpg,label=cls,caption=txt,tokens=tok:list<int32>,score=score:float32")
      assert(df.schema.fields.toSeq.drop(8) == Seq(
        StructField("caption", StringType, nullable = false),
        StructField("tokens", ArrayType(IntegerType, containsNull = false), nullable = false),
        StructField("score", FloatType, nullable = false)))
      assert(df.schema.fieldNames.take(8).toSeq ==
        Seq("image", "height", "width", "channels", "label", "key", "shard", "index"))
      val rows = df.collect()
      assert(rows.length == 18)
      // the same samples read as image + label only: the pixels to compare each row's with
      val plain = read(in).collect().map(r => r.getAs[String]("key") -> r.getAs[Array[Byte]]("image").toSeq).toMap
      assert(plain.size == 18)
      rows.foreach { r =>
        val key = r.getAs[String]("key")
        val i = CaptionData.number(key)
        val caption = r.getAs[String]("caption")
        assert(caption == CaptionData.caption(i))
        assert(caption.endsWith(key) && caption.contains(CaptionData.Classes(r.getAs[Int]("label"))))
        assert(r.getAs[Array[Byte]]("image").toSeq == plain(key), s"the image of $key")
        assert(r.getAs[Long]("index") == i.toLong)
        assert(r.getAs[scala.collection.Seq[Int]]("tokens").toSeq == CaptionData.tokens(caption))
        assert(r.getAs[Float]("score") == CaptionData.score(i))
      }
      // SQL over the fields, and a column subset holding only a field
      val byClass = spark.sql(
        s"SELECT label, count(*) FROM spindle.`$in` WITH ('fields' = 'image=jpg,label=cls,caption=txt', 'size' = '16')" +
          " WHERE caption LIKE 'a photo of a dog%' GROUP BY label").collect()
      assert(byClass.map(r => (r.getInt(0), r.getLong(1))).toSeq == Seq((1, 4L)))
      assert(read(in, "fields" -> "image=jpg,caption=txt").select("caption").collect().length == 18)
      assertAllocatorsClosed()
    }
  }

  test("image + caption without labels: label is -100; decode=false carries the fields too") {
    TestFiles.withTempDir("ds-nolabel") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 1, perShard = 5)
      val rows = read(in, "fields" -> "image=jpg,caption=txt").collect()
      assert(rows.map(_.getAs[Int]("label")).distinct.toSeq == Seq(-100))
      assert(rows.map(r => r.getAs[String]("caption")).sorted.toSeq == (0 until 5).map(CaptionData.caption).sorted)
      val encoded = read(in, "decode" -> "false", "fields" -> "image=jpg,caption=txt,meta=tok:bytes").collect()
      assert(encoded.head.schema.fieldNames.toSeq ==
        Seq("image", "format", "label", "key", "shard", "index", "caption", "meta"))
      encoded.foreach { r =>
        val i = CaptionData.number(r.getAs[String]("key"))
        assert(r.getAs[String]("caption") == CaptionData.caption(i))
        assert(new String(r.getAs[Array[Byte]]("meta"), "US-ASCII") == CaptionData.tokens(CaptionData.caption(i)).mkString("[", ", ", "]"))
      }
      assertAllocatorsClosed()
    }
  }

  test("bad fields are quarantined, listed with their reason and counted; the others arrive") {
    TestFiles.withTempDir("ds-badfields") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 1, perShard = 4)
      val jpeg = dev.spindle.spark.example.SampleImages.jpeg(CaptionData.Seed, 0, 48, 40)
      TestFiles.writeTar(in.resolve("bad.tar"), Seq(
        "nocap.jpg" -> jpeg, "nocap.cls" -> ascii("1"),
        "badtok.jpg" -> jpeg, "badtok.cls" -> ascii("1"), "badtok.txt" -> ascii("x"), "badtok.tok" -> ascii("[1, \"a\"]"),
        "long.jpg" -> jpeg, "long.cls" -> ascii("1"), "long.txt" -> ascii("y" * 100), "long.tok" -> ascii("[1]")))
      val q = dir.resolve("q")
      val rows = read(in, "fields" -> "image=jpg,label=cls,caption=txt,tokens=tok:list<int32>",
        "fields.maxBytes" -> "64", "maxFailures" -> "10", "quarantine" -> q.toString).collect()
      assert(rows.map(_.getAs[String]("key")).sorted.toSeq == (0 until 4).map(CaptionData.key))
      val listed = spark.read.json(q.toString).collect()
        .map(r => r.getAs[String]("key") -> r.getAs[String]("reason")).toMap
      assert(listed.keySet == Set("nocap", "badtok", "long"))
      assert(listed("nocap").startsWith("no '.txt' member for field 'caption' of key 'nocap'"), listed)
      assert(listed("badtok").contains("field 'tokens' (list<int32>) in badtok.tok: element 1 ('\"a\"') is not an int32"), listed)
      assert(listed("long") == "field 'caption': member long.txt is 100 bytes, over spark.spindle.fields.maxBytes=64", listed)
      assertAllocatorsClosed()
    }
  }

  test("an ill-formed fields option fails at once, naming option, key, entry and the valid types") {
    TestFiles.withTempDir("ds-badopt") { dir =>
      val in = CaptionData.write(dir.resolve("in"), shards = 1, perShard = 1)
      val e = intercept[IllegalArgumentException](read(in, "fields" -> "image=jpg,caption=txt:text").schema)
      assert(e.getMessage.contains("Invalid value for option 'fields' (spark.spindle.fields)"), e.getMessage)
      assert(e.getMessage.contains("entry 'caption=txt:text': unknown type 'text' (valid types: image, int32"), e.getMessage)
    }
  }

  test("Parquet: the declared columns are read, typed from the file's schema; a mismatch is refused naming both types") {
    TestFiles.withTempDir("ds-parquet-fields") { dir =>
      val in = CaptionData.writeParquet(dir.resolve("in"), 7)
      val df = read(in, "fields" -> "image=image,label=label,caption=caption:string,tokens=tokens:list<int32>,score=score:float32")
      val rows = df.collect()
      assert(rows.length == 7)
      rows.foreach { r =>
        val i = r.getAs[Long]("index").toInt
        assert(r.getAs[String]("key") == s"captions.parquet#$i")
        assert(r.getAs[Int]("label") == CaptionData.label(i))
        assert(r.getAs[String]("caption") == CaptionData.caption(i))
        assert(r.getAs[scala.collection.Seq[Int]]("tokens").toSeq == CaptionData.tokens(CaptionData.caption(i)))
        assert(r.getAs[Float]("score") == CaptionData.score(i))
      }
      val wide = read(in, "fields" -> "image=image,caption=caption:string,tokens=tokens:list<int64>,score=score:float64").collect()
      assert(wide.map(_.getAs[Int]("label")).distinct.toSeq == Seq(-100))
      assert(wide.map(r => r.getAs[scala.collection.Seq[Long]]("tokens").toSeq).toSet ==
        (0 until 7).map(i => CaptionData.tokens(CaptionData.caption(i)).map(_.toLong)).toSet)
      val e = intercept[Exception](read(in, "fields" -> "image=image,caption=caption:int32").collect())
      val msg = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")
      assert(msg.contains("column 'caption' has type 'optional binary caption (STRING)'; field 'caption' declares int32"), msg)
      assertAllocatorsClosed()
    }
  }

  test("Parquet: a null value of a declared column quarantines its row, naming field, column and row") {
    TestFiles.withTempDir("ds-parquet-null") { dir =>
      val in = CaptionData.writeParquet(dir.resolve("in"), 4, nullCaption = 2)
      val q = dir.resolve("q")
      val rows = read(in, "fields" -> "image=image,caption=caption", "maxFailures" -> "5",
        "quarantine" -> q.toString).collect()
      assert(rows.map(_.getAs[Long]("index")).sorted.toSeq == Seq(0L, 1L, 3L))
      val listed = spark.read.json(q.toString).collect().map(r => r.getAs[String]("key") -> r.getAs[String]("reason"))
      assert(listed.toSeq == Seq("captions.parquet#2" -> "the value is null (field 'caption', column 'caption', row 2)"))
      assertAllocatorsClosed()
    }
  }

  test("image folders: image and label as today; a declared extra field quarantines each sample, saying why") {
    TestFiles.withTempDir("ds-folder-fields") { dir =>
      val in = dir.resolve("in")
      for ((cls, i) <- Seq("cat" -> 0, "dog" -> 1)) {
        java.nio.file.Files.createDirectories(in.resolve(cls))
        java.nio.file.Files.write(in.resolve(s"$cls/$i.jpg"), dev.spindle.spark.example.SampleImages.jpeg(1L, i, 48, 40))
      }
      assert(read(in, "fields" -> "image=jpg,label=cls").collect().map(_.getAs[Int]("label")).sorted.toSeq == Seq(0, 1))
      val q = dir.resolve("q")
      assert(read(in, "fields" -> "image=jpg,caption=txt", "maxFailures" -> "5", "quarantine" -> q.toString).collect().isEmpty)
      val reasons = spark.read.json(q.toString).collect().map(_.getAs[String]("reason")).sorted.toSeq
      assert(reasons == Seq("cat/0.jpg", "dog/1.jpg").map(k =>
        s"no value for field 'caption' of key '$k': an image folder's sample has only its image and its class"), reasons)
      assertAllocatorsClosed()
    }
  }

  private def assertAllocatorsClosed(): Unit = {
    val root = ExecutorAllocator.root(Long.MaxValue)
    assert(root.getChildAllocators.isEmpty, root.toVerboseString)
    assert(root.getAllocatedMemory == 0)
  }
}
