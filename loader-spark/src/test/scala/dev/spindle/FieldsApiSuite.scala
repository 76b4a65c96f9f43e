package dev.spindle

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import dev.spindle.spark.feed.FeedData
import dev.spindle.spark.testkit.{CaptionData, SparkFixture, TestFiles}
import org.scalatest.funsuite.AnyFunSuite

/**
 * `fields(...)` on the API's builders: a feed that declares today's image and label delivers
 * today's batches; one that declares extra fields delivers the same plan's batches.
 */
class FieldsApiSuite extends AnyFunSuite with SparkFixture {
  override protected def extraConf: Map[String, String] =
    Map("spark.spindle.batchSize" -> "3", "spark.spindle.image.size" -> "8")

  test("feed: image=png,label=cls delivers today's batches; extra fields ride along on the same plan") {
    TestFiles.withTempDir("fields-api") { dir =>
      val in: Path = FeedData.tars(dir.resolve("in"), Seq(7, 5))
      val f = Spindle.feed(spark).input(in.toString).worldSize(2).seed(4).fields("image=png,label=cls").run()
      val digests = f.ranks().asScala.sortBy(_.rank).map(_.digest).toSeq
      assert(digests == FeedData.planDigests(FeedData.manifest(in), FeedData.spec(4, 0, 2, 3)))
      // extra fields ride along on the same plan
      val captions = CaptionData.write(dir.resolve("captions"), shards = 2, perShard = 5)
      val withFields = Spindle.feed(spark).input(captions.toString).worldSize(2).seed(4)
        .fields("image=jpg,label=cls,caption=txt,tokens=tok:list<int32>").run()
      assert(withFields.ranks().asScala.sortBy(_.rank).map(_.digest).toSeq ==
        FeedData.planDigests(FeedData.manifest(captions), FeedData.spec(4, 0, 2, 3)))
      val bad = intercept[IllegalArgumentException](Spindle.feed(spark).fields("image=png,caption=txt:str"))
      assert(bad.getMessage.contains("unknown type 'str'"), bad.getMessage)
    }
  }
}
